// DRA device selectors: compile a DeviceClass's CEL expressions and evaluate them against a device,
// as k8s.io/dynamic-resource-allocation/cel (compile.go) and the structured allocator do.
import { DRADevice, draEnvironment } from "./environment.js";
import { type AstNode, currentNode } from "./metering.js";
import { metered, planRuntimeCost } from "./runtime-cost.js";
import { Quantity } from "./quantity.js";
import { afterCheck, beforeCheck } from "./kubernetes-semantics.js";
import { compileRegexp } from "./re2.js";
import { Semver } from "./semver.js";

/** resourceapi.CELSelectorExpressionMaxLength: 10 Ki, counted in bytes as Go's len(). */
export const CEL_SELECTOR_EXPRESSION_MAX_LENGTH = 10 * 1024;

/**
 * resourceapi.CELSelectorExpressionMaxCost: the per-expression cost limit Kubernetes' scheduler
 * enforces at run time, in cel-go's runtime cost units (runtime-cost.ts).
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
  /** True or false, or an error: a non-boolean result, an unknown field, the cost limit. */
  evaluate(device: Device, options?: { costLimit?: number }): EvaluationResult;
}

export type CompileResult =
  | { ok: true; program: DeviceSelectorProgram }
  /** `TooLong` is Kubernetes' field.TooLong; `Invalid` carries the CEL message for field.Invalid. */
  | { ok: false; reason: "TooLong" | "Invalid"; message: string };

interface CelError {
  code?: string;
  summary?: string;
  message: string;
  name?: string;
  range?: { start: number };
}

/** cel-go's wording for the engine's most common compile errors. */
function celGoMessage(e: CelError): string {
  const summary = e.summary ?? e.message;
  if (e.name === "ParseError") return `Syntax error: ${summary}`;
  const subject = /: (.*)$/.exec(summary)?.[1] ?? "";
  if (e.code === "unknown_variable") return `undeclared reference to '${subject}' (in container '')`;
  if (e.code === "no_such_key") return `undefined field '${subject}'`;
  return summary;
}

/** cel-go's ERROR: <input>:line:col: message, with the source line and a caret. */
function display(expression: string, offset: number, message: string): string {
  const before = expression.slice(0, offset);
  const line = before.split("\n").length;
  const column = offset - (before.lastIndexOf("\n") + 1);
  const source = (expression.split("\n")[line - 1] ?? "").replaceAll("\t", " ");
  return `ERROR: <input>:${line}:${column + 1}: ${message}\n | ${source}\n | ${".".repeat(Math.min(column, source.length))}^`;
}

const compilationFailed = (expression: string, offset: number, message: string): CompileResult => ({
  ok: false,
  reason: "Invalid",
  message: `compilation failed: ${display(expression, offset, message)}`,
});

/** cel-go's spelling of a type: `list(int)`, `map(string, dyn)`, `null_type`. */
const celGoType = (t: string) =>
  t === "null" ? "null_type" : t.replaceAll("optional<", "optional_type<").replaceAll("<", "(").replaceAll(">", ")");

function isAstNode(x: unknown): x is AstNode {
  return typeof x === "object" && x !== null && typeof (x as AstNode).op === "string" && "args" in x;
}

/** A `matches()` with a constant pattern that RE2 (and so Kubernetes) would refuse. */
function literalRegexpProblem(node: AstNode): { offset: number; message: string } | undefined {
  let pattern: AstNode | undefined;
  if (node.op === "rcall" && (node.args as unknown[])[0] === "matches") pattern = ((node.args as unknown[])[2] as AstNode[])[0];
  if (node.op === "call" && (node.args as unknown[])[0] === "matches") pattern = ((node.args as unknown[])[1] as AstNode[])[1];
  if (pattern?.op === "value" && typeof pattern.args === "string") {
    const compiled = compileRegexp(pattern.args);
    if (!compiled.ok) return { offset: pattern.start, message: compiled.message };
  }
  const children = Array.isArray(node.args) ? node.args.flat() : [node.args];
  for (const child of children) {
    if (!isAstNode(child)) continue;
    const found = literalRegexpProblem(child);
    if (found) return found;
  }
  return undefined;
}

/**
 * Compiles a selector against the `device` variable: at most 10 Ki, well-formed, type-checked (an
 * unknown field of `device` is a compile error) and boolean (or dyn, checked when evaluated).
 */
export function compileDeviceSelector(expression: string): CompileResult {
  if (Buffer.byteLength(expression) > CEL_SELECTOR_EXPRESSION_MAX_LENGTH) {
    return { ok: false, reason: "TooLong", message: `may not be more than ${CEL_SELECTOR_EXPRESSION_MAX_LENGTH} bytes` };
  }
  let parsed: ReturnType<typeof draEnvironment.parse>;
  try {
    parsed = draEnvironment.parse(expression);
  } catch (e) {
    const err = e as CelError;
    return compilationFailed(expression, err.range?.start ?? 0, celGoMessage(err));
  }
  beforeCheck(parsed.ast);
  const checked = parsed.check();
  if (!checked.valid) {
    const err = (checked.error ?? new Error("type check failed")) as CelError;
    return compilationFailed(expression, err.range?.start ?? 0, celGoMessage(err));
  }
  const type = checked.type ?? "dyn";
  if (type !== "bool" && type !== "dyn") {
    return { ok: false, reason: "Invalid", message: `must evaluate to bool or the unknown type, not ${celGoType(type)}` };
  }
  const root = parsed.ast as unknown as AstNode;
  const regexp = literalRegexpProblem(root);
  if (regexp) return compilationFailed(expression, regexp.offset, regexp.message);
  afterCheck(parsed.ast, { structuralEquality: false });
  planRuntimeCost(parsed.ast);
  const run = parsed as unknown as (context: { device: DRADevice }) => unknown;
  return { ok: true, program: new Program(expression, root, run) };
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

/** The engine's runtime error as cel-go words it (`no such key: model`). */
function runtimeMessage(e: unknown): string {
  const err = e as CelError;
  const text = (err.summary ?? err.message ?? String(e)).trim();
  return text.charAt(0).toLowerCase() + text.slice(1);
}

class Program implements DeviceSelectorProgram {
  constructor(
    readonly expression: string,
    private readonly root: AstNode,
    private readonly run: (context: { device: DRADevice }) => unknown,
  ) {}

  evaluate(device: Device, options: { costLimit?: number } = {}): EvaluationResult {
    const input = toCel(device);
    if (typeof input === "string") return { ok: false, message: input, cost: 0 };
    return this.evaluateInput(input, options.costLimit ?? CEL_SELECTOR_EXPRESSION_MAX_COST);
  }

  evaluateInput(device: DRADevice, limit: number): EvaluationResult {
    const { value, error, cost } = metered(limit, () => this.run({ device }), this.root);
    if (error !== undefined) return { ok: false, message: runtimeMessage(error), cost };
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
