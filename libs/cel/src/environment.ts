// The CEL environment of DRA device selectors (k8s.io/dynamic-resource-allocation/cel): one typed
// variable `device` (kubernetes.DRADevice), Kubernetes' quantity and semver libraries, cel.bind()
// and optional values from the engine, and a metered evaluator (metering.ts) that enforces a cost bound.
import { Environment } from "@marcbachmann/cel-js";
import type { Quantity } from "./quantity.js";
import { registerExtensionLibraries } from "./extension-libraries.js";
import { registerQuantityAndSemver } from "./libraries.js";
import { type AstNode, type Evaluator, activeMeter, charge, instrument } from "./metering.js";

/** The value of `device`: the input of a selector, as Kubernetes declares it. */
export class DRADevice {
  constructor(
    readonly driver: string,
    readonly attributes: ReadonlyMap<string, ReadonlyMap<string, unknown>>,
    readonly capacity: ReadonlyMap<string, ReadonlyMap<string, Quantity>>,
    readonly allowMultipleAllocations: boolean,
  ) {}
}

/** Ops whose result the engine builds afresh: they also pay for its size (cel-go charges ~0.1 per element). */
const SIZED_OPS = new Set(["+", "call", "rcall"]);

function sizeOf(v: unknown): number {
  if (typeof v === "string" || Array.isArray(v) || v instanceof Uint8Array) return v.length;
  if (v instanceof Map || v instanceof Set) return v.size;
  return 0;
}

const env = registerExtensionLibraries(registerQuantityAndSemver(new Environment({ enableOptionalTypes: true })))
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

instrument(env, function meteredRun(this: Evaluator, node: AstNode, ctx: unknown): unknown {
  const m = activeMeter();
  if (!m) return node.evaluate(this, node, ctx);
  const parent = m.node;
  charge(m, 1);
  m.node = node;
  let result: unknown;
  try {
    result = node.evaluate(this, node, ctx);
  } finally {
    m.node = parent;
  }
  if (SIZED_OPS.has(node.op)) charge(m, Math.ceil(sizeOf(result) / 10));
  return result;
});

export { env as draEnvironment };
