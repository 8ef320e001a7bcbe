// The CEL environment of DRA device selectors (k8s.io/dynamic-resource-allocation/cel compile.go):
// Kubernetes' base environment (compile.ts, as CRD rules and admission expressions have it) with the
// semver library and cel.bind(), one typed variable `device` (kubernetes.DRADevice), and a metered
// evaluator (runtime-cost.ts) that enforces a cost bound.
import { baseEnvironment } from "./compile.js";
import { instrument } from "./metering.js";
import type { Quantity } from "./quantity.js";
import { costRun } from "./runtime-cost.js";

/** The value of `device`: the input of a selector, as Kubernetes declares it. */
export class DRADevice {
  constructor(
    readonly driver: string,
    readonly attributes: ReadonlyMap<string, ReadonlyMap<string, unknown>>,
    readonly capacity: ReadonlyMap<string, ReadonlyMap<string, Quantity>>,
    readonly allowMultipleAllocations: boolean,
  ) {}
}

const env = baseEnvironment
  .clone()
  .registerType({
    name: "kubernetes.DRADevice",
    ctor: DRADevice,
    fields: {
      driver: "string",
      attributes: "map<string, map<string, dyn>>",
      capacity: "map<string, map<string, kubernetes.Quantity>>",
      allowMultipleAllocations: "bool",
    },
  })
  .registerVariable("device", "kubernetes.DRADevice");

instrument(env, costRun);

export { env as draEnvironment };
