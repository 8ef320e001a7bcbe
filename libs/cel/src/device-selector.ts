// DRA device selectors: compile a DeviceClass's CEL expressions and evaluate them against a device,
// as k8s.io/dynamic-resource-allocation/cel (compile.go) and the structured allocator do.
import { celRuntimeMessage, compileExpression } from "./compile.js";
import { estimateCost } from "./cost-estimate.js";
import { DRADevice, draEnvironment } from "./environment.js";
import { type AstNode, currentNode } from "./metering.js";
import { Quantity } from "./quantity.js";
import { metered } from "./runtime-cost.js";
import { Semver } from "./semver.js";

/** resourceapi.CELSelectorExpressionMaxLength: 10 Ki, counted in bytes as Go's len(). */
export const CEL_SELECTOR_EXPRESSION_MAX_LENGTH = 10 * 1024;

/**
 * resourceapi.CELSelectorExpressionMaxCost: the limit of a selector's estimated cost when it is
 * created, and of its actual cost when the scheduler evaluates it, in cel-go's cost units
 * (cost-estimate.ts, runtime-cost.ts).
 */
export const CEL_SELECTOR_EXPRESSION_MAX_COST = 1_000_000;

/** A DRA device attribute (resource.k8s.io/v1 DeviceAttribute): exactly one value. */
export interface DeviceAttribute {
  int?: number | bigint;
  bool?: boolean;
  string?: string;
  version?: string;
}

/** A DRA device capacity (resource.k8s.io/v1 DeviceCapacity): a quantity such as `40Gi`. */
export interface DeviceCapacity {
  value: string | number;
}

/** What a selector sees of a device: its driver, attributes, capacities, allowMultipleAllocations. */
export interface Device {
  driver: string;
  /** Qualified names: `model` is in the driver's domain, `ext.example.com/family` in another. */
  attributes?: Readonly<Record<string, DeviceAttribute>>;
  capacity?: Readonly<Record<string, DeviceCapacity>>;
  allowMultipleAllocations?: boolean;
}

export type EvaluationResult = { ok: true; matches: boolean; cost: number } | { ok: false; message: string; cost: number };

export interface DeviceSelectorProgram {
  readonly expression: string;
  /**
   * The estimated worst-case cost of one evaluation (cel-go's EstimateCost max, saturating at 2^64);
   * Kubernetes refuses a new selector above CEL_SELECTOR_EXPRESSION_MAX_COST.
   */
  readonly maxCost: number;
  /** True or false, or an error: a non-boolean result, an unknown field, the cost limit. */
  evaluate(device: Device, options?: { costLimit?: number }): EvaluationResult;
}

export type CompileResult =
  | { ok: true; program: DeviceSelectorProgram }
  /** `TooLong` is Kubernetes' field.TooLong; `Invalid` carries the CEL message for field.Invalid. */
  | { ok: false; reason: "TooLong" | "Invalid"; message: string };

/** cel-go's spelling of a type: `list(int)`, `map(string, dyn)`, `null_type`. */
const celGoType = (t: string) =>
  t === "null" ? "null_type" : t.replaceAll("optional<", "optional_type<").replaceAll("<", "(").replaceAll(">", ")");

/**
 * Compiles a selector against the `device` variable as DRA's CompileCELExpression does: at most 10 Ki,
 * compiled as every CEL expression of orch is (compile.ts: parse, type check — an unknown field of
 * `device` is a compile error —, Kubernetes' literal validators), boolean (or dyn, checked when
 * evaluated), and its worst-case cost estimated as cel-go's checker does (`maxCost`), which DeviceClass
 * validation compares to CEL_SELECTOR_EXPRESSION_MAX_COST.
 */
export function compileDeviceSelector(expression: string): CompileResult {
  if (Buffer.byteLength(expression) > CEL_SELECTOR_EXPRESSION_MAX_LENGTH) {
    return { ok: false, reason: "TooLong", message: `may not be more than ${CEL_SELECTOR_EXPRESSION_MAX_LENGTH} bytes` };
  }
  const compiled = compileExpression(draEnvironment, expression, { structuralEquality: false });
  if ("issue" in compiled) return { ok: false, reason: "Invalid", message: `compilation failed: ${compiled.issue}` };
  if (compiled.type !== "bool" && compiled.type !== "dyn") {
    return { ok: false, reason: "Invalid", message: `must evaluate to bool or the unknown type, not ${celGoType(compiled.type)}` };
  }
  const root = compiled.parsed.ast as unknown as AstNode;
  // DRA's estimator has no size estimator: a device's strings, lists and maps are of unknown size.
  const maxCost = estimateCost(root, undefined).max;
  const run = compiled.parsed as unknown as (context: { device: DRADevice }) => unknown;
  return { ok: true, program: new Program(expression, root, run, maxCost) };
}

/** cel-go's name of a value's type, for the non-boolean result error. */
function typeName(v: unknown): string {
  switch (typeof v) {
    case "bigint":
      return "int";
    case "number":
      return "double";
    case "string":
      return "string";
    case "boolean":
      return "bool";
    default:
      if (v === null || v === undefined) return "null_type";
      if (v instanceof Quantity) return "kubernetes.Quantity";
      if (v instanceof Semver) return "kubernetes.Semver";
      if (v instanceof Uint8Array) return "bytes";
      if (Array.isArray(v) || v instanceof Set) return "list";
      if (v instanceof Map || Object.getPrototypeOf(v) === Object.prototype) return "map";
      return (v as object).constructor?.name ?? typeof v;
  }
}

class Program implements DeviceSelectorProgram {
  constructor(
    readonly expression: string,
    private readonly root: AstNode,
    private readonly run: (context: { device: DRADevice }) => unknown,
    readonly maxCost: number,
  ) {}

  evaluate(device: Device, options: { costLimit?: number } = {}): EvaluationResult {
    const input = toCel(device);
    if (typeof input === "string") return { ok: false, message: input, cost: 0 };
    return this.evaluateInput(input, options.costLimit ?? CEL_SELECTOR_EXPRESSION_MAX_COST);
  }

  evaluateInput(device: DRADevice, limit: number): EvaluationResult {
    const { value, error, cost } = metered(limit, () => this.run({ device }), this.root);
    if (error !== undefined) return { ok: false, message: celRuntimeMessage(error), cost };
    if (typeof value !== "boolean") {
      const t = typeName(value);
      return {
        ok: false,
        message: `CEL result of type ${t} could not be converted to bool: type conversion error from '${t}' to 'bool'`,
        cost,
      };
    }
    return { ok: true, matches: value, cost };
  }
}

/**
 * A map whose lookup of an unknown key answers an empty map (DRA's rule for attribute and capacity
 * prefixes), while `in`, `size()` and iteration see only the real entries.
 */
function withEmptyDefault<V>(entries: Map<string, Map<string, V>>): Map<string, Map<string, V>> {
  const empty = new Map<string, V>();
  return new Proxy(entries, {
    get(target, property) {
      if (property === "get") {
        return (key: string) => target.get(key) ?? (currentNode()?.op === "in" ? undefined : empty);
      }
      const member: unknown = Reflect.get(target, property, target);
      return typeof member === "function" && property !== "constructor" ? member.bind(target) : member;
    },
  });
}

/** A qualified name without a domain is in the driver's domain (parseQualifiedName). */
function splitQualifiedName(name: string, driver: string): [string, string] {
  const slash = name.indexOf("/");
  return slash < 0 ? [driver, name] : [name.slice(0, slash), name.slice(slash + 1)];
}

function attributeValue(a: DeviceAttribute): unknown {
  if (a.int !== undefined) {
    if (typeof a.int === "number" && !Number.isSafeInteger(a.int)) throw new Error(`invalid int value ${a.int}`);
    return BigInt(a.int);
  }
  if (a.bool !== undefined) return a.bool;
  if (a.string !== undefined) return a.string;
  if (a.version !== undefined) {
    try {
      return Semver.parse(a.version);
    } catch (e) {
      throw new Error(`parse semantic version: ${(e as Error).message}`);
    }
  }
  throw new Error("unsupported attribute value");
}

/** The `device` value for a device, or the reason it cannot be built (as DeviceMatches reports it). */
function toCel(device: Device): DRADevice | string {
  const attributes = new Map<string, Map<string, unknown>>();
  for (const [name, attribute] of Object.entries(device.attributes ?? {})) {
    let value: unknown;
    try {
      value = attributeValue(attribute);
    } catch (e) {
      return `attribute ${name}: ${(e as Error).message}`;
    }
    const [domain, id] = splitQualifiedName(name, device.driver);
    const group = attributes.get(domain) ?? attributes.set(domain, new Map()).get(domain)!;
    group.set(id, value);
  }
  const capacity = new Map<string, Map<string, Quantity>>();
  for (const [name, c] of Object.entries(device.capacity ?? {})) {
    let value: Quantity;
    try {
      value = Quantity.parse(String(c.value));
    } catch (e) {
      return `capacity ${name}: ${(e as Error).message}`;
    }
    const [domain, id] = splitQualifiedName(name, device.driver);
    const group = capacity.get(domain) ?? capacity.set(domain, new Map()).get(domain)!;
    group.set(id, value);
  }
  return new DRADevice(device.driver, withEmptyDefault(attributes), withEmptyDefault(capacity), device.allowMultipleAllocations ?? false);
}

/** Compiled selectors by expression, so that a class evaluated against many devices compiles once. */
const CACHE_SIZE = 256;
const cache = new Map<string, CompileResult>();

function compileCached(expression: string): CompileResult {
  const hit = cache.get(expression);
  if (hit) return hit;
  const result = compileDeviceSelector(expression);
  if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!);
  cache.set(expression, result);
  return result;
}

/** The part of a DeviceClass spec that selects devices. */
export interface DeviceClassSelectors {
  selectors?: readonly { cel?: { expression?: string } }[];
}

/**
 * Evaluates every selector of a class against a device, in order, as the structured allocator does:
 * the device matches when every selector is true; the first false selector decides (later ones are
 * not evaluated); an error (a non-boolean result, an unknown field, the cost limit, an expression that
 * does not compile) aborts with a message naming the selector.
 */
export function evaluateDeviceClass(
  spec: DeviceClassSelectors,
  device: Device,
  options: { className?: string; costLimit?: number } = {},
): { matches: boolean } | { error: string } {
  const prefix = options.className === undefined ? "" : `class ${options.className}: `;
  const input = toCel(device);
  if (typeof input === "string") return { error: `${prefix}${input}` };
  const selectors = spec.selectors ?? [];
  for (const [i, selector] of selectors.entries()) {
    // A selector of a kind this code does not know cannot be satisfied.
    if (!selector.cel) return { matches: false };
    const compiled = compileCached(selector.cel.expression ?? "");
    if (!compiled.ok) return { error: `${prefix}selector #${i}: CEL compile error: ${compiled.message}` };
    const result = (compiled.program as Program).evaluateInput(input, options.costLimit ?? CEL_SELECTOR_EXPRESSION_MAX_COST);
    if (!result.ok) return { error: `${prefix}selector #${i}: CEL runtime error: ${result.message}` };
    if (!result.matches) return { matches: false };
  }
  return { matches: true };
}
