// The CEL environment of DRA device selectors (k8s.io/dynamic-resource-allocation/cel): one typed
// variable `device` (kubernetes.DRADevice), Kubernetes' quantity and semver libraries, cel.bind()
// and optional values from the engine, and a metered evaluator (metering.ts) that enforces a cost bound.
import { Environment } from "@marcbachmann/cel-js";
import type { Quantity } from "./quantity.js";
import { regexpProblem } from "./regexp-guard.js";
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

/** Whether `node` is the pattern argument of a `matches()` call `parent`. */
function isMatchesPattern(parent: AstNode, node: AstNode): boolean {
  if (parent.op === "rcall") {
    const [name, , args] = parent.args as [string, AstNode, AstNode[]];
    return name === "matches" && args[0] === node;
  }
  if (parent.op === "call") {
    const [name, args] = parent.args as [string, AstNode[]];
    return name === "matches" && args[1] === node;
  }
  return false;
}

const env = registerQuantityAndSemver(new Environment({ enableOptionalTypes: true }))
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
  if (parent && typeof result === "string" && isMatchesPattern(parent, node)) {
    const problem = regexpProblem(result);
    if (problem) throw new Error(problem);
  }
  return result;
});

export { env as draEnvironment };
