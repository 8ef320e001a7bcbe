// @orch/cel: the CEL environments orch evaluates. Today: DRA device selectors (DeviceClass, spec 2.7).
export {
  CEL_SELECTOR_EXPRESSION_MAX_COST,
  CEL_SELECTOR_EXPRESSION_MAX_LENGTH,
  compileDeviceSelector,
  evaluateDeviceClass,
  type CompileResult,
  type Device,
  type DeviceAttribute,
  type DeviceCapacity,
  type DeviceClassSelectors,
  type DeviceSelectorProgram,
  type EvaluationResult,
} from "./device-selector.js";
export { Quantity, QuantityError } from "./quantity.js";
export { Semver, SemverError } from "./semver.js";
