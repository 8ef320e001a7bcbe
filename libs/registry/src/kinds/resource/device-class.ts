// DeviceClass (resource.<domain>/v1, spec 2.7). Validation is Kubernetes' ValidateDeviceClass
// (pkg/apis/resource/validation/validation.go) with its messages and field paths; CEL selectors are
// compiled by @orch/cel against the DRA `device` variable. `metadata.generation` follows `spec`
// through the generic store (the default generation source is everything but metadata and status).
import { DeviceClass, type NamingProfile } from "@orch/api";
import { CEL_SELECTOR_EXPRESSION_MAX_COST, CEL_SELECTOR_EXPRESSION_MAX_LENGTH, compileDeviceSelector } from "@orch/cel";
import { type FieldError, FieldPath, fieldError, jsonEqual } from "@orch/machinery";
import type { KindDefinition } from "../../generic/kind.js";
import { defineKind } from "../../generic/define.js";
import { isExtendedResourceName, validateDriverName } from "./resource-names.js";

/** resourceapi.DeviceSelectorsMaxSize, DeviceConfigMaxSize, OpaqueParametersMaxLength. */
const SELECTORS_MAX = 32;
const CONFIG_MAX = 32;
const PARAMETERS_MAX_LENGTH = 10 * 1024;

type Spec = NonNullable<DeviceClass["spec"]>;
type Selector = NonNullable<Spec["selectors"]>[number];
type Config = NonNullable<Spec["config"]>[number];

/** validateSlice: too many items is one error (the items are not looked at), else each item's errors. */
function eachOf<T>(items: readonly T[] | undefined, max: number, at: FieldPath, check: (item: T, at: FieldPath) => FieldError[]) {
  if (!items) return [];
  if (items.length > max) return [fieldError.tooMany(at, items.length, max)];
  return items.flatMap((item, i) => check(item, at.index(i)));
}

/**
 * validateSelector / validateCELSelector: the expression compiles, and its estimated worst-case cost is
 * within CELSelectorExpressionMaxCost. Kubernetes 1.32 checks both on every update too; an unchanged
 * selector list ("stored") only compiles in its stored-expressions environment, which adds nothing
 * orch runs (two-variable comprehensions, introduced in 1.32), so one environment serves both.
 */
function validateSelector(selector: Selector, at: FieldPath): FieldError[] {
  if (!selector.cel) return [fieldError.required(at.child("cel"))];
  const expressionPath = at.child("cel", "expression");
  const expression = selector.cel.expression ?? "";
  const compiled = compileDeviceSelector(expression);
  if (compiled.ok) {
    if (compiled.program.maxCost > CEL_SELECTOR_EXPRESSION_MAX_COST) {
      return [fieldError.forbidden(expressionPath, "too complex, exceeds cost limit")];
    }
    return [];
  }
  if (compiled.reason === "TooLong") return [fieldError.tooLong(expressionPath, "", CEL_SELECTOR_EXPRESSION_MAX_LENGTH)];
  return [fieldError.invalid(expressionPath, expression, compiled.message)];
}

/** validateRawExtension: required, at most 10 Ki of JSON (new data only), a JSON object. */
function validateParameters(parameters: unknown, at: FieldPath, stored: boolean): FieldError[] {
  if (parameters === undefined || parameters === null) return [fieldError.required(at)];
  if (!stored && Buffer.byteLength(JSON.stringify(parameters)) > PARAMETERS_MAX_LENGTH) {
    return [fieldError.tooLong(at, "", PARAMETERS_MAX_LENGTH)];
  }
  if (typeof parameters !== "object" || Array.isArray(parameters)) {
    return [fieldError.invalid(at, "<value omitted>", "must be a valid JSON object")];
  }
  return [];
}

/** validateDeviceConfiguration: exactly one member (`opaque`), then the driver and its parameters. */
function validateConfig(config: Config, at: FieldPath, stored: boolean): FieldError[] {
  const opaque = config.opaque;
  if (!opaque) return [fieldError.required(at.child("opaque"))];
  const path = at.child("opaque");
  return [
    ...validateDriverName(opaque.driver ?? "", path.child("driver")),
    ...validateParameters(opaque.parameters, path.child("parameters"), stored),
  ];
}

/** validateDeviceClassSpec; `old` is the stored spec on update. */
function validateSpec(spec: Spec | undefined, old: Spec | undefined): FieldError[] {
  const at = FieldPath.root("spec");
  // orch's rule (spec 2.7: "spec is required"); Kubernetes decodes a missing spec as an empty one.
  if (!spec) return [fieldError.required(at)];
  const storedConfig = old !== undefined && jsonEqual(spec.config ?? [], old.config ?? []);
  const errs = [
    ...eachOf(spec.selectors, SELECTORS_MAX, at.child("selectors"), validateSelector),
    ...eachOf(spec.config, CONFIG_MAX, at.child("config"), (c, p) => validateConfig(c, p, storedConfig)),
  ];
  const name = spec.extendedResourceName;
  if (name !== undefined && !isExtendedResourceName(name)) {
    errs.push(fieldError.invalid(at.child("extendedResourceName"), name, "must be a valid extended resource name"));
  }
  return errs;
}

export const deviceClasses = (p: NamingProfile): KindDefinition =>
  defineKind({
    group: p.group("resource"),
    version: "v1",
    kind: "DeviceClass",
    plural: "deviceclasses",
    namespaced: false,
    schema: DeviceClass,
    deleteReturnsObject: true,
    strategy: {
      validate: (obj) => validateSpec(obj.spec, undefined),
      validateUpdate: (obj, old) => validateSpec(obj.spec, old.spec ?? {}),
    },
  });
