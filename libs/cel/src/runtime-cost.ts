// The runtime cost of an evaluation as cel-go v0.22 counts it (interpreter/runtimecost.go) in the
// program Kubernetes 1.32 builds (cel.OptOptimize, PresenceTestHasCost(false), and
// k8s.io/apiserver/pkg/cel/library/cost.go's CallCost for its libraries). cel-go charges what its
// planner made of the expression, not the expression's nodes one by one:
// - a variable costs 1, each field, index or optional selection on it 1 more (a chain of them is one
//   "attribute"); an index that is itself an attribute (`m[k]`) costs what that attribute costs; a
//   selection on a value that is no attribute (`f(x).a`) starts a relative attribute, 1 more;
// - constants cost nothing, and with OptOptimize neither do list and map literals of constants nor a
//   conversion of a constant (`duration('1s')`); any other list literal costs 10, map literal 30;
// - `&&`, `||` and `?:` cost nothing themselves; a `?:` branch that is an attribute is resolved
//   without being observed, so its variable is free (only its selections count);
// - a call costs by its function and its arguments' sizes (strings in code points): string equality
//   and ordering a tenth of the shorter operand, concatenation a tenth of both, matches() the product
//   of string and pattern lengths, Kubernetes' library its own formulas; any other call 1;
// - `x in [constants]` is a set lookup (free); `x in list` costs the list's size;
// - a macro costs what the comprehension cel-go expands it to costs: `all` 3 per element evaluated
//   plus its predicate, `exists` 4, `map` 12 per element (`accu + [f(x)]`), `filter` 13 per element
//   kept, `exists_one` 2 per match, plus reading the result (1; `exists_one` 2), and when `all` or
//   `exists` stop early, the loop condition once more (2 or 3);
// - has() costs its selection's operand (the presence test itself is free in Kubernetes);
// - after an error, what cel-go still evaluates, its errors being values (evaluateAfterError()).
// Each node gets its price once, after type checking (planRuntimeCost); the metered evaluator
// (costRun) charges it as the node's evaluation ends, from the values its children produced.
import { Environment, Optional } from "@marcbachmann/cel-js";
import { NamedFormat } from "./extension-libraries.js";
import { LIST_CREATE, MAP_CREATE, REGEX, STRING, STRUCT_CREATE, UNIT_COST_CALLS } from "./library-costs.js";
import {
  type AstNode,
  COST_LIMIT_EXCEEDED,
  CostLimitExceeded,
  type Evaluator,
  type Frame,
  type Iterations,
  type Meter,
  activeMeter,
  charge,
  withMeter,
} from "./metering.js";
import { OPTIONAL_ENTRY_FUNCTION } from "./optional-entries.js";
import { RuleObject } from "./values.js";

/** library/cost.go: what a `check()` of the authorizer library costs. */
const AUTHORIZATION_CHECK = 350_000;

/** apiserver/pkg/cel/library/format.go ConstantFormats' MaxRegexSize, by format name. */
const FORMAT_REGEX_SIZE: Readonly<Record<string, number>> = {
  DNS1123Label: 30,
  DNS1123Subdomain: 60,
  DNS1035Label: 30,
  QualifiedName: 60,
  DNS1123LabelPrefix: 30,
  DNS1123SubdomainPrefix: 60,
  DNS1035LabelPrefix: 30,
  LabelValue: 40,
  // len(govalidator.URL), len(strfmt.UUIDPattern), len(govalidator.Base64), len(strfmt.DateTimePattern).
  URI: 1103,
  uuid: 70,
  byte: 84,
  date: 71,
  datetime: 71,
};

/** cel-go's type conversion functions (overloads.IsTypeConversionFunction), folded on constants. */
const CONVERSIONS = new Set(["bool", "bytes", "double", "duration", "dyn", "int", "string", "timestamp", "type", "uint"]);

interface Node extends AstNode {
  readonly meta: Record<string, unknown> & { alternate?: Node; macro?: Record<string, unknown>; celCost?: Plan };
  readonly checkedType?: unknown;
}

/** The price of one node: charged when its evaluation ends. */
export interface Plan {
  /** Charged on every evaluation. */
  readonly fixed: number;
  /** The children whose values `priced` reads, by slot. */
  readonly slots?: ReadonlyMap<AstNode, number>;
  /** The rest of the price, from the children's values (undefined for one that failed) and costs. */
  readonly priced?: (values: readonly unknown[], result: unknown, costs: readonly number[]) => number;
  /** A comprehension's step: counts one iteration of it. */
  readonly step?: boolean;
  /** A comprehension's range: its size is the number of elements the comprehension may visit. */
  readonly range?: boolean;
  /**
   * A macro: reading the result costs `result`; stopping before the range's end costs `stop`.
   * `exhaustive`: cel-go goes on to the range's end after an element's step failed (the engine stops).
   */
  readonly comprehension?: { readonly result: number; readonly stop: number; readonly exhaustive?: boolean };
  /** A call: priced only when each operand was evaluated (cel-go's cost tracker finds every argument). */
  readonly call?: boolean;
  /**
   * What cel-go evaluates of the operands when one fails: `both` (a call of two, evalBinary), or
   * `inOrder` (a longer call, a list: from the first, up to the first error; the engine goes from the last).
   */
  readonly operands?: "both" | "inOrder";
}

/** The engine's class of uint values (not exported by the package). */
const UnsignedInt = (new Environment().evaluate("1u") as object).constructor;

const FREE: Plan = { fixed: 0 };
const ONE: Plan = { fixed: 1 };

// ---------------------------------------------------------------------------------------------
// Sizes, as cel-go's actualSize and Kubernetes' traversalCost measure values
// ---------------------------------------------------------------------------------------------

const isPlainObject = (v: object): boolean => {
  const proto = Object.getPrototypeOf(v);
  return proto === null || proto === Object.prototype;
};

/** traits.Sizer's Size(): code points of a string, bytes, elements, entries; 1 for anything else. */
export function celSize(v: unknown): number {
  if (typeof v === "string") {
    let n = 0;
    for (const _ of v) n++;
    return n;
  }
  if (typeof v !== "object" || v === null) return 1;
  if (v instanceof Uint8Array) return v.length;
  if (Array.isArray(v)) return v.length;
  if (v instanceof Map || v instanceof Set) return v.size;
  if (v instanceof RuleObject || isPlainObject(v)) return Object.keys(v).length;
  return 1;
}

/** library/cost.go traversalCost: a tenth of every string's bytes (rounded down), 1 per scalar. */
function traversalCost(v: unknown): number {
  if (typeof v === "string") return Math.trunc(Buffer.byteLength(v) * STRING);
  if (v instanceof Uint8Array) return Math.trunc(v.length * STRING);
  if (Array.isArray(v)) return v.reduce((sum: number, x) => sum + traversalCost(x), 0);
  if (v instanceof Set) return [...v].reduce((sum: number, x) => sum + traversalCost(x), 0);
  if (v instanceof Map) return [...v].reduce((sum: number, [k, x]) => sum + traversalCost(k) + traversalCost(x), 0);
  if (typeof v === "object" && v !== null && (v instanceof RuleObject || isPlainObject(v))) {
    return Object.entries(v).reduce((sum: number, [k, x]) => sum + traversalCost(k) + traversalCost(x), 0);
  }
  return 1;
}

/** Go's uint64(math.Ceil(float64(n) * factor)), with the same float arithmetic. */
const ceilBy = (n: number, factor: number): number => Math.ceil(n * factor);

const isBytesLike = (v: unknown): boolean => typeof v === "string" || v instanceof Uint8Array;

/** library/cost.go selectorCostEstimate for a selector of `length` bytes. */
function selectorCost(length: number): number {
  const requirements = Math.ceil(length * 0.5);
  return LIST_CREATE + ceilBy(length, STRING) + Math.ceil(requirements * (LIST_CREATE + STRUCT_CREATE));
}

/**
 * What one call costs besides its arguments: Kubernetes' CallCost by function name first, then
 * cel-go's overload trackers (sets), then cel-go's defaults by overload. `args` are cel-go's: the
 * receiver first for a member call.
 */
export function callCost(fn: string, member: boolean, args: readonly unknown[], result: unknown): number {
  if (UNIT_COST_CALLS.has(fn)) return 1;
  const [a0, a1] = args;
  switch (fn) {
    case "check":
      return AUTHORIZATION_CHECK;
    case "serviceAccount":
    case "path":
    case "group":
    case "resource":
    case "subresource":
    case "namespace":
    case "name":
    case "allowed":
    case "reason":
    case "error":
    case "errored":
      return 1;
    case "fieldSelector":
    case "labelSelector":
      return args.length >= 2 ? selectorCost(celSize(a1)) : 1;
    case "isSorted":
    case "sum":
    case "max":
    case "min":
    case "indexOf":
    case "lastIndexOf":
      return args.length > 0 ? traversalCost(a0) : 0;
    case "url":
    case "lowerAscii":
    case "upperAscii":
    case "substring":
    case "trim":
    case "cidr":
    case "isIP":
    case "isCIDR":
    case "quantity":
    case "isQuantity":
      return ceilBy(celSize(a0), STRING);
    case "replace":
    case "split":
      return Math.ceil(celSize(a0) * 2 * STRING);
    case "join":
      return Math.ceil(celSize(result) * 2 * STRING);
    case "find":
    case "findAll":
      return regexCost(a0, celSize(a1));
    case "ip":
      // cidr.ip() reads a field; ip(string) parses.
      return member ? 1 : ceilBy(celSize(a0), STRING);
    case "ip.isCanonical":
      return Math.ceil(celSize(a0) * 2 * STRING);
    case "containsIP":
    case "containsCIDR": {
      const cidr = celSize(a0);
      let cost = ceilBy(cidr + cidr, STRING);
      if (fn === "containsCIDR") cost += ceilBy(cidr, STRING) + 1;
      if (typeof a1 === "string") cost += ceilBy(celSize(a1), STRING);
      return cost;
    }
    case "validate":
      if (a0 instanceof NamedFormat) return regexCost(a1, FORMAT_REGEX_SIZE[a0.name] ?? 0);
      return 1;
    // cel-go ext.Sets' cost trackers.
    case "sets.contains":
    case "sets.intersects":
      return 1 + Math.trunc(celSize(a0) * celSize(a1) * 1);
    case "sets.equivalent":
      return 1 + Math.trunc(celSize(a0) * celSize(a1) * 2);
    // cel-go's own (runtimecost.go costCall).
    case "startsWith":
    case "endsWith":
    case "strings.quote":
      return ceilBy(celSize(a0), STRING);
    case "format":
      return typeof a0 === "string" ? ceilBy(celSize(a0), STRING) : 1;
    case "bytes":
      return typeof a0 === "string" ? ceilBy(celSize(a0), STRING) : 1;
    case "string":
      return a0 instanceof Uint8Array ? ceilBy(celSize(a0), STRING) : 1;
    case "matches":
      // Only the member overload (matches_string) has a size-based cost in cel-go v0.22.
      return member && typeof a0 === "string" ? regexCost(a0, celSize(a1)) : 1;
    case "contains":
      return typeof a0 === "string" ? ceilBy(celSize(a0), STRING) * ceilBy(celSize(a1), STRING) : 1;
    default:
      return 1;
  }
}

/** A regular expression over a string: (1 + length) / 10 times pattern length / 4, each rounded up. */
const regexCost = (text: unknown, patternLength: number): number => ceilBy(1 + celSize(text), STRING) * ceilBy(patternLength, REGEX);

/** A binary operator's cost (cel-go's overloads of `_==_`, `_<_`, `_+_`, `@in` and the rest). */
function operatorCost(op: string, left: unknown, right: unknown): number {
  switch (op) {
    case "==":
    case "!=":
      return ceilBy(Math.min(celSize(left), celSize(right)), STRING);
    case "<":
    case "<=":
    case ">":
    case ">=":
      if ((typeof left === "string" && typeof right === "string") || (left instanceof Uint8Array && right instanceof Uint8Array)) {
        return ceilBy(Math.min(celSize(left), celSize(right)), STRING);
      }
      return 1;
    case "+":
      if (isBytesLike(left) && isBytesLike(right)) return ceilBy(celSize(left) + celSize(right), STRING);
      return 1;
    case "in":
      return Array.isArray(right) || right instanceof Set ? celSize(right) : 1;
    default:
      return 1;
  }
}

// ---------------------------------------------------------------------------------------------
// Planning: the price of every node of a checked expression
// ---------------------------------------------------------------------------------------------

const isNode = (x: unknown): x is Node => typeof x === "object" && x !== null && typeof (x as Node).op === "string" && "meta" in x;

/** A name bound to a constant (a namespace such as `sets`, a type name): a constant in cel-go. */
const isConstantId = (n: Node): boolean => n.op === "id" && n.meta.alternate !== undefined;

/** An InterpretableAttribute in cel-go's plan: a variable, a selection or index, a conditional. */
function isAttribute(n: Node): boolean {
  switch (n.op) {
    case "id":
      return !isConstantId(n);
    case ".":
    case ".?":
    case "[]":
    case "[?]":
    case "?:":
      return true;
    default:
      return false;
  }
}

const macroName = (n: Node): string | undefined =>
  (n.op === "call" || n.op === "rcall") && n.meta.macro ? ((n.args as [string])[0] as string) : undefined;

class Planner {
  constructor(private readonly folding: boolean) {}

  /** An InterpretableConst after cel-go's planning (constant folding included when enabled). */
  private isConstant(n: Node): boolean {
    switch (n.op) {
      case "value":
        return true;
      case "id":
        return isConstantId(n);
      case "-_": {
        // cel-go's parser reads a negative number as one literal.
        const operand = n.args as Node;
        return operand.op === "value" && (typeof operand.args === "bigint" || typeof operand.args === "number");
      }
      case "list":
        return this.folding && (n.args as Node[]).every((x) => this.isConstant(x));
      case "map":
        return this.folding && (n.args as [Node, Node][]).every(([k, v]) => this.isConstant(k) && this.isConstant(v));
      case "call": {
        const [name, args] = n.args as [string, Node[]];
        return this.folding && CONVERSIONS.has(name) && args.length === 1 && this.isConstant(args[0]!);
      }
      default:
        return false;
    }
  }

  private set(n: Node, plan: Plan): void {
    n.meta.celCost = plan;
  }

  /**
   * Prices `n` and its subtree. `branch`: `n` heads a `?:` branch, whose attribute cel-go resolves
   * without observing it (its variable, or the relative attribute it starts, is free).
   */
  plan(n: Node, branch = false): void {
    if (n.meta.alternate && n.op !== "id") {
      if (n.meta.alternate.op === "comprehension") return this.macro(n);
      this.set(n, FREE);
      return this.plan(n.meta.alternate, branch);
    }
    switch (n.op) {
      case "value":
        return this.set(n, FREE);
      case "id":
        return this.set(n, isConstantId(n) || branch ? FREE : ONE);
      case ".":
      case ".?": {
        const operand = (n.args as [Node])[0];
        const attribute = isAttribute(operand);
        const relative = attribute || branch ? 0 : 1;
        // An optional qualification is observed only when the field is there.
        this.set(n, n.op === ".?" ? { fixed: relative, priced: presentQualification } : { fixed: relative + 1 });
        return this.plan(operand, branch && attribute);
      }
      case "[]":
      case "[?]": {
        const [operand, index] = n.args as [Node, Node];
        const attribute = isAttribute(operand);
        // A constant or computed index is one qualification; an index that is an attribute costs
        // what resolving it costs (a conditional one, 1).
        const qualifier = isAttribute(index) && index.op !== "?:" ? 0 : 1;
        const relative = attribute || branch ? 0 : 1;
        if (n.op === "[?]") {
          // Observed only when the key is there: an absent one takes back an attribute index's 1.
          this.set(n, {
            fixed: relative,
            priced: qualifier === 1 ? presentQualification : (_v, result) => (isPresent(result) ? 0 : -1),
          });
        } else {
          this.set(n, { fixed: relative + qualifier });
        }
        this.plan(operand, branch && attribute);
        return this.plan(index);
      }
      case "?:": {
        const [condition, truthy, falsy] = n.args as [Node, Node, Node];
        this.set(n, FREE);
        this.plan(condition);
        this.plan(truthy, true);
        return this.plan(falsy, true);
      }
      case "&&":
      case "||":
        this.set(n, FREE);
        for (const x of n.args as Node[]) this.plan(x);
        return;
      case "!_":
        this.set(n, ONE);
        return this.plan(n.args as Node);
      case "-_":
        this.set(n, this.isConstant(n) ? FREE : ONE);
        return this.plan(n.args as Node);
      case "list": {
        const items = n.args as Node[];
        this.set(n, this.isConstant(n) ? FREE : { fixed: LIST_CREATE, slots: slotsOf(items), operands: "inOrder" });
        for (const x of items) this.plan(x);
        return;
      }
      case "map": {
        const entries = n.args as [Node, Node][];
        this.set(n, { fixed: this.isConstant(n) ? 0 : MAP_CREATE });
        for (const [k, v] of entries) {
          this.plan(k);
          this.plan(v);
        }
        return;
      }
      case "in":
        return this.inList(n);
      case "==":
      case "!=":
      case "<":
      case "<=":
      case ">":
      case ">=":
      case "+":
      case "-":
      case "*":
      case "/":
      case "%": {
        const [left, right] = n.args as [Node, Node];
        const op = n.op;
        this.set(n, { fixed: 0, slots: slotsOf([left, right]), priced: (v) => operatorCost(op, v[0], v[1]), call: true, operands: "both" });
        this.plan(left);
        return this.plan(right);
      }
      case "call":
      case "rcall":
        return this.call(n);
      default:
        // A node this planner does not know (none today): one unit, as most of cel-go's steps.
        this.set(n, ONE);
        for (const x of [n.args].flat(2)) if (isNode(x)) this.plan(x);
    }
  }

  /**
   * `x in list`: a set lookup when the list is a literal of primitive constants (OptOptimize), and the
   * constant false without evaluating `x` when that literal is empty.
   */
  private inList(n: Node): void {
    const [element, range] = n.args as [Node, Node];
    const constantRange = this.folding && range.op === "list" && this.isConstant(range);
    const primitives =
      constantRange &&
      (range.args as Node[]).every((x) => {
        const v = x.op === "value" ? x.args : x.op === "-_" ? 0 : undefined;
        return (
          typeof v === "bigint" || typeof v === "number" || typeof v === "string" || typeof v === "boolean" || v instanceof UnsignedInt
        );
      });
    if (constantRange && (range.args as Node[]).length === 0) {
      this.set(n, { fixed: 0, slots: slotsOf([element]), priced: (_v, _r, costs) => -(costs[0] ?? 0) });
    } else {
      this.set(
        n,
        primitives
          ? FREE
          : { fixed: 0, slots: slotsOf([element, range]), priced: (v) => operatorCost("in", v[0], v[1]), call: true, operands: "both" },
      );
    }
    this.plan(element);
    this.plan(range);
  }

  private call(n: Node): void {
    const macro = macroName(n);
    if (macro !== undefined) return this.macroCall(n, macro);
    let name: string;
    let receiver: Node | undefined;
    let args: Node[];
    if (n.op === "rcall") [name, receiver, args] = n.args as [string, Node, Node[]];
    else [name, args] = n.args as [string, Node[]];
    for (const x of [receiver, ...args]) if (x) this.plan(x);
    // An optional entry of a list or map literal (optional-entries.ts) is no call in cel-go.
    if (name === OPTIONAL_ENTRY_FUNCTION) return this.set(n, FREE);
    if (n.op === "call" && CONVERSIONS.has(name) && this.isConstant(n)) return this.set(n, FREE);
    // A namespaced function (`sets.contains`, `ip.isCanonical`) is a global function in cel-go.
    const namespaced = receiver !== undefined && isConstantId(receiver);
    const fn = namespaced ? `${receiver!.args as string}.${name}` : name;
    const member = receiver !== undefined && !namespaced;
    const operands = member ? [receiver!, ...args] : args;
    this.set(n, {
      fixed: 0,
      slots: slotsOf(operands),
      priced: (v, result) => callCost(fn, member, v, result),
      call: true,
      operands: operands.length === 2 ? "both" : "inOrder",
    });
  }

  /** Macros that are no comprehension: has(), cel.bind(), optMap(), optFlatMap(). */
  private macroCall(n: Node, name: string): void {
    const macro = n.meta.macro!;
    switch (name) {
      case "has": {
        // has(x.f) costs what resolving x costs: the presence test is free (PresenceTestHasCost(false)).
        const props = (macro.macroHasProps as Node[] | undefined) ?? [];
        const base = props.at(-1);
        const selections = Math.max(props.length - 1, 0);
        const argument = (macro.args as Node[] | undefined)?.[0];
        if (base) this.plan(base);
        const wholeSelection = argument !== undefined && props.length > 0 && optionalOperand(argument);
        if (wholeSelection && argument) {
          // The selection runs as a whole (kubernetes-semantics.ts typeCheckHas): its last step is free.
          this.set(n, { fixed: -1 });
          return this.plan(argument);
        }
        return this.set(n, { fixed: selections - 1 + (base && !isAttribute(base) ? 1 : 0) });
      }
      case "bind": {
        // A comprehension over [] (a constant when folded) whose accumulator is the bound value, which
        // cel-go evaluates when the body first reads it: never, when the body does not name it.
        const value = macro.val as Node;
        const body = macro.exp as Node;
        this.plan(value);
        this.plan(body);
        const fixed = this.folding ? 0 : LIST_CREATE;
        if (refersTo(body, macro.var as string)) return this.set(n, { fixed });
        return this.set(n, { fixed, slots: slotsOf([value]), priced: (_v, _r, costs) => -(costs[0] ?? 0) });
      }
      case "optMap":
      case "optFlatMap": {
        // cel-go: o.hasValue() ? optional.of(cel.bind(v, o.value(), e)) : optional.none(), where o
        // is evaluated twice when it has a value.
        const receiver = macro.receiver as Node;
        const body = macro.body as Node;
        this.plan(receiver);
        this.plan(body);
        const extra = name === "optMap" ? 2 : 1;
        this.set(n, {
          fixed: 1,
          slots: slotsOf([receiver]),
          priced: (v, _r, costs) => (v[0] instanceof Optional && v[0].hasValue() ? extra + (costs[0] ?? 0) : 1),
        });
        return;
      }
      case "or":
      case "orValue":
        // cel-go short-circuits these (evalOptionalOr): no cost of their own; the alternative is
        // evaluated only when the optional is empty, as the engine's macro does.
        this.set(n, FREE);
        for (const key of ["receiver", "arg"]) if (isNode(macro[key])) this.plan(macro[key] as Node);
        return;
      default:
        this.set(n, ONE);
        for (const x of Object.values(macro)) if (isNode(x) && x !== n) this.plan(x);
    }
  }

  /** all, exists, exists_one, map, filter: priced as the comprehension cel-go expands each to. */
  private macro(n: Node): void {
    const name = (n.args as [string])[0];
    const comprehension = n.meta.alternate!.args as { iterable: Node; init: Node; step: Node };
    const { iterable, init, step } = comprehension;
    this.plan(iterable);
    iterable.meta.celCost = { ...iterable.meta.celCost!, range: true };
    this.plan(init);
    const [predicate, whenTrue, whenFalse] = step.op === "?:" ? (step.args as [Node, Node, Node]) : [];
    if (predicate) this.plan(predicate);
    const append = (element: Node, synthetic: boolean): Plan => {
      // accu + [element]: the accumulator 1, the list 10 (unless a constant), the concatenation 1.
      if (synthetic) {
        this.set(element, FREE);
        return { fixed: 1 + LIST_CREATE + 1 + 1 };
      }
      this.plan(element);
      return { fixed: 2 + (this.isConstant(element) ? 0 : LIST_CREATE) };
    };
    switch (name) {
      case "all":
      case "exists":
        // all: @not_strictly_false(accu) 2, accu && p 1 + p; exists: @not_strictly_false(!accu) 3, accu || p.
        this.set(step, { fixed: name === "all" ? 3 : 4, step: true });
        for (const x of [whenTrue, whenFalse]) if (x) this.set(x, FREE);
        this.set(n, { fixed: 0, comprehension: { result: 1, stop: name === "all" ? 2 : 3 } });
        return;
      case "exists_one":
        // p ? accu + 1 : accu (the addition 1, the accumulator 1); the result accu == 1 costs 2.
        this.set(step, { fixed: 0, step: true });
        if (whenTrue) this.set(whenTrue, { fixed: 2 });
        if (whenFalse) this.set(whenFalse, FREE);
        this.set(n, { fixed: 0, comprehension: { result: 2, stop: 0, exhaustive: true } });
        return;
      default: {
        // map and filter: accu + [x], under the predicate when there is one.
        const filtered = predicate !== undefined;
        const push = filtered ? whenTrue! : step;
        const element = push.args as Node;
        const plan = append(element, name === "filter");
        if (filtered) {
          this.set(step, { fixed: 0, step: true });
          this.set(push, plan);
          if (whenFalse) this.set(whenFalse, FREE);
        } else {
          this.set(step, { ...plan, step: true });
        }
        this.set(n, { fixed: 0, comprehension: { result: 1, stop: 0, exhaustive: true } });
      }
    }
  }
}

const isPresent = (result: unknown): boolean => result instanceof Optional && result.hasValue();

/** An optional selection or index (`.?f`, `[?k]`): 1 when the field or key is there, as cel-go observes it. */
const presentQualification = (_values: readonly unknown[], result: unknown): number => (isPresent(result) ? 1 : 0);

/** Whether `node` reads the variable `name` anywhere below it. */
function refersTo(node: unknown, name: string): boolean {
  let found = false;
  const seen = new Set<unknown>();
  const visit = (x: unknown): void => {
    if (found || typeof x !== "object" || x === null || seen.has(x)) return;
    seen.add(x);
    if (isNode(x)) {
      if (x.op === "id" && x.args === name) found = true;
      visit(x.args);
      visit(x.meta.alternate);
      if (x.meta.macro) for (const v of Object.values(x.meta.macro)) if (v !== x) visit(v);
      return;
    }
    if (Array.isArray(x)) for (const v of x) visit(v);
    else if (Object.getPrototypeOf(x) === Object.prototype) for (const v of Object.values(x)) visit(v);
  };
  visit(node);
  return found;
}

/** Whether has()'s argument selects through an optional (its selection then runs as a whole). */
function optionalOperand(argument: Node): boolean {
  const operand = (argument.args as [Node])[0];
  return (operand?.checkedType as { kind?: string } | undefined)?.kind === "optional";
}

function slotsOf(nodes: readonly Node[]): ReadonlyMap<AstNode, number> {
  return new Map(nodes.map((x, i) => [x, i]));
}

/**
 * Prices every node of a checked expression as cel-go's runtime cost does. `constantFolding`
 * (cel.OptOptimize) is on in every Kubernetes program; Kubernetes' and cel-go's own cost tables run
 * without it, which is why it can be turned off.
 */
export function planRuntimeCost(ast: unknown, options: { constantFolding?: boolean } = {}): void {
  new Planner(options.constantFolding ?? true).plan(ast as Node);
}

// ---------------------------------------------------------------------------------------------
// Evaluation
// ---------------------------------------------------------------------------------------------

const NO_VALUES: readonly unknown[] = [];
const NO_COSTS: readonly number[] = [];

/** A node that was not planned (none should be): one unit. */
const UNPLANNED: Plan = ONE;

/**
 * What ends a node's evaluation: restores the meter's position, charges the node's price, and hands
 * its value and cost to the node being evaluated above it when that one prices from its children.
 */
function leave(
  m: Meter,
  node: AstNode,
  plan: Plan,
  frame: Frame | undefined,
  parentFrame: Frame | undefined,
  parentNode: AstNode | undefined,
  parentIterations: Iterations | undefined,
  before: number,
  result: unknown,
  failed: boolean,
): void {
  const iterations = m.iterations;
  m.frame = parentFrame;
  m.node = parentNode;
  m.iterations = parentIterations;
  let cost = plan.fixed;
  const unpriced = failed && plan.call && frame !== undefined && !everyOperandEvaluated(frame);
  if (plan.priced && !unpriced) {
    cost += plan.priced(frame?.values ?? NO_VALUES, failed ? undefined : result, frame?.costs ?? NO_COSTS);
  }
  // A comprehension that failed after its range was evaluated ran to the range's end and read its
  // result (the error the accumulator holds).
  if (plan.comprehension && iterations && (!failed || iterations.items !== undefined)) {
    cost += plan.comprehension.result;
    if (!failed && iterations.steps < iterations.range) cost += plan.comprehension.stop;
  }
  if (plan.range && !failed && parentIterations) parentIterations.range = celSize(result);
  if (cost !== 0) charge(m, cost);
  if (parentFrame) {
    const slot = parentFrame.slots.get(node);
    if (slot !== undefined) {
      parentFrame.values[slot] = failed ? undefined : result;
      parentFrame.costs[slot] = m.cost - before;
    }
  }
}

const everyOperandEvaluated = (frame: Frame): boolean => {
  for (const slot of frame.slots.values()) if (frame.costs[slot] === undefined) return false;
  return true;
};

/** A comprehension range's elements, as the engine iterates them (a map's keys). */
function elementsOf(range: unknown): readonly unknown[] {
  if (Array.isArray(range)) return range;
  if (range instanceof Set) return [...range];
  if (range instanceof Map) return [...range.keys()];
  if (typeof range === "object" && range !== null) return Object.keys(range);
  return [];
}

/** Evaluates `node` for its cost only: an error other than the cost limit's is cel-go's error value. */
function evaluateForCost(evaluator: Evaluator, node: AstNode, ctx: unknown): void {
  try {
    evaluator.run(node, ctx);
  } catch (error) {
    if (error instanceof CostLimitExceeded) throw error;
  }
}

/**
 * Makes the operands evaluated those cel-go evaluates when one fails: all of a binary call's
 * (evalBinary, evalEq); of a longer call's or a list's, those from the first up to the first error
 * (evalVarArgs, evalList), where the engine went from the last down to its first error: the earlier
 * ones are evaluated now, and what the later ones cost is taken back.
 */
function settleOperands(m: Meter, plan: Plan, frame: Frame): void {
  const evaluator = frame.evaluator;
  if (!plan.slots || !evaluator) return;
  const operands = [...plan.slots].sort((a, b) => a[1] - b[1]);
  const failedAt = (slot: number): boolean => frame.costs[slot] !== undefined && frame.values[slot] === undefined;
  if (plan.operands === "both") {
    for (const [operand, slot] of operands) if (frame.costs[slot] === undefined) evaluateForCost(evaluator, operand, frame.ctx);
    return;
  }
  const engineFailure = operands.find(([, slot]) => failedAt(slot));
  if (!engineFailure) return;
  let firstFailure = engineFailure[1];
  for (const [operand, slot] of operands) {
    if (slot >= firstFailure) break;
    if (frame.costs[slot] === undefined) evaluateForCost(evaluator, operand, frame.ctx);
    if (failedAt(slot)) firstFailure = slot;
  }
  let unreached = 0;
  for (const [, slot] of operands) {
    if (slot <= firstFailure || frame.costs[slot] === undefined) continue;
    unreached += frame.costs[slot]!;
    delete frame.costs[slot];
    frame.values[slot] = undefined;
  }
  if (unreached !== 0) m.cost -= unreached;
}

/**
 * Evaluates, for their cost, what cel-go evaluates after an error and the engine (which throws)
 * does not: operands (settleOperands), and the remaining elements of a map(), filter() or
 * exists_one() whose step failed (the accumulator holds the error; the loop condition is `true`).
 * The meter is at `node`, whose evaluation failed.
 */
function evaluateAfterError(m: Meter, node: AstNode, plan: Plan, frame: Frame | undefined): void {
  if (plan.operands && frame) settleOperands(m, plan, frame);
  const iterations = m.iterations;
  if (!plan.comprehension?.exhaustive || !iterations?.evaluator || iterations.items === undefined) return;
  const comprehension = (node as Node).meta.alternate?.args as ComprehensionArgs | undefined;
  if (!comprehension) return;
  const elements = elementsOf(iterations.items);
  const evaluator = iterations.evaluator;
  // The accumulator stays as the failed step left it: the steps' values are not used.
  const scope = comprehension.iterCtx.reuse(iterations.ctx);
  for (let i = iterations.steps; i < elements.length; i++) {
    evaluateForCost(evaluator, comprehension.step, scope.setIterValue(elements[i], evaluator));
  }
}

/** The engine's comprehension node arguments that evaluateAfterError() uses. */
interface ComprehensionArgs {
  readonly step: AstNode;
  readonly iterCtx: { reuse(parent: unknown): { setIterValue(value: unknown, evaluator: Evaluator): unknown } };
}

/** The metered `run` every environment's evaluator gets (metering.ts instrument()). */
export function costRun(this: Evaluator, node: AstNode, ctx: unknown): unknown {
  const m = activeMeter();
  if (!m) return node.evaluate(this, node, ctx);
  // A spent meter evaluates nothing more (the engine may go on looping after catching the error).
  if (m.cost > m.limit) throw COST_LIMIT_EXCEEDED;
  const plan = (node as Node).meta.celCost ?? UNPLANNED;
  const parentFrame = m.frame;
  const parentNode = m.node;
  const parentIterations = m.iterations;
  const before = m.cost;
  const frame: Frame | undefined = plan.slots ? { slots: plan.slots, values: [], costs: [] } : undefined;
  if (parentFrame && parentFrame.evaluator === undefined) {
    parentFrame.evaluator = this;
    parentFrame.ctx = ctx;
  }
  if (plan.step && parentIterations) parentIterations.steps++;
  m.frame = frame;
  m.node = node;
  if (plan.comprehension) m.iterations = { steps: 0, range: 0 };
  let result: unknown;
  try {
    result = node.evaluate(this, node, ctx);
  } catch (error) {
    if (error instanceof CostLimitExceeded) throw error;
    evaluateAfterError(m, node, plan, frame);
    leave(m, node, plan, frame, parentFrame, parentNode, parentIterations, before, undefined, true);
    throw error;
  }
  leave(m, node, plan, frame, parentFrame, parentNode, parentIterations, before, result, false);
  if (plan.range && parentIterations) {
    parentIterations.items = result;
    parentIterations.evaluator = this;
    parentIterations.ctx = ctx;
  }
  return result;
}

/**
 * Runs `evaluate` (a program whose root is `root`) under a fresh meter. The engine evaluates the root
 * without its evaluator's run(), so the root is priced here. The cost is checked again at the end: the
 * engine swallows errors inside `||`, `&&` and comprehensions when another operand decides the result,
 * and an exceeded limit must still fail the evaluation.
 */
export function metered<T>(limit: number, evaluate: () => T, root?: AstNode): { value?: T; error?: unknown; cost: number } {
  const m: Meter = { cost: 0, limit, node: undefined, frame: undefined, iterations: undefined };
  try {
    const value = withMeter(m, () => {
      if (!root) return evaluate();
      // The root's price, as costRun() would charge it.
      const plan = (root as Node).meta.celCost ?? UNPLANNED;
      const frame: Frame | undefined = plan.slots ? { slots: plan.slots, values: [], costs: [] } : undefined;
      m.frame = frame;
      m.node = root;
      if (plan.comprehension) m.iterations = { steps: 0, range: 0 };
      let result: T;
      try {
        result = evaluate();
      } catch (error) {
        if (!(error instanceof CostLimitExceeded)) {
          evaluateAfterError(m, root, plan, frame);
          leave(m, root, plan, frame, undefined, undefined, undefined, 0, undefined, true);
        }
        throw error;
      }
      leave(m, root, plan, frame, undefined, undefined, undefined, 0, result, false);
      return result;
    });
    return m.cost > limit ? { error: new CostLimitExceeded(), cost: m.cost } : { value, cost: m.cost };
  } catch (error) {
    return { error: m.cost > limit ? new CostLimitExceeded() : error, cost: m.cost };
  }
}
