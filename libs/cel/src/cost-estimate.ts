// The static cost estimate of a rule, as cel-go's checker.Cost (v0.22, checker/cost.go) computes it with
// Kubernetes' estimator (k8s.io/apiserver/pkg/cel/library/cost.go, and apiextensions-apiserver's size
// estimator, which sizes `self.x.y` from the schema's maxItems/maxProperties/maxLength). It walks the
// engine's checked AST and prices each node as cel-go prices the node it would have built: macros as
// the comprehensions cel-go expands them to, operators as their overloads. Costs are uint64 in Go;
// here doubles that saturate at 2^64, which is exact below 2^53 (all limits are far below).
import { type RuleType, escapeFieldName } from "./rule-types.js";
import { LIST_CREATE, MAP_CREATE, REGEX, STRING, UNIT_COST_CALLS } from "./library-costs.js";
import { OPTIONAL_ENTRY_FUNCTION } from "./optional-entries.js";

export interface Estimate {
  readonly min: number;
  readonly max: number;
}

const U64 = 2 ** 64;
const add = (a: number, b: number) => Math.min(a + b, U64);
const mul = (a: number, b: number) => (a === 0 || b === 0 ? 0 : Math.min(a * b, U64));
const factor = (a: number, f: number) => (a * f >= U64 ? U64 : Math.ceil(a * f));

const E = (min: number, max = min): Estimate => ({ min, max });
const plus = (a: Estimate, b: Estimate): Estimate => E(add(a.min, b.min), add(a.max, b.max));
const times = (a: Estimate, b: Estimate): Estimate => E(mul(a.min, b.min), mul(a.max, b.max));
const byFactor = (a: Estimate, f: number): Estimate => E(factor(a.min, f), factor(a.max, f));
const union = (a: Estimate, b: Estimate): Estimate => E(Math.min(a.min, b.min), Math.max(a.max, b.max));
const ZERO = E(0);
const ONE = E(1);
const UNKNOWN_SIZE = E(0, U64);

/** apiserver/pkg/cel MaxNameFormatRegexSize. */
const MAX_NAME_FORMAT_REGEX_SIZE = 128;

interface Node {
  op: string;
  args: unknown;
  checkedType?: unknown;
  meta?: { macro?: { args?: unknown } };
}

/** What cel-go knows of an evaluated sub-expression: its cost, its schema path, its computed size. */
interface Info {
  cost: Estimate;
  path?: string[] | undefined;
  size?: Estimate | undefined;
  type: string;
  /** A literal's value (split()'s limit). */
  literal?: unknown;
}

const typeOf = (n: Node): string => {
  const t = n.checkedType as { name?: string } | string | undefined;
  return (typeof t === "string" ? t : t?.name) ?? "dyn";
};
const isList = (t: string) => t.startsWith("list<") || t === "list";
const isMap = (t: string) => t.startsWith("map<") || t === "map";
const isStringLike = (t: string) => t === "string" || t === "bytes";
const SCALARS = new Set(["bool", "double", "int", "uint", "google.protobuf.Duration", "google.protobuf.Timestamp"]);
/** Object types (cel-go StructKind): a rule schema's `selfType…`, DRA's kubernetes.DRADevice. */
const isStructNode = (n: Node): boolean => (n.checkedType as { kind?: string } | undefined)?.kind === "message";
const MACROS = new Set(["all", "exists", "exists_one", "map", "filter"]);
/** Kubernetes types whose equality costs 1 (library/cost.go `_==_`). */
const CONSTANT_EQUALITY = new Set(["kubernetes.Quantity", "kubernetes.Semver", "net.IP", "net.CIDR", "kubernetes.IP", "kubernetes.CIDR"]);

class Coster {
  /** Comprehension variables in scope: the path and type of their range. */
  private readonly ranges = new Map<string, Info[]>();

  constructor(private readonly root: RuleType | undefined) {}

  /**
   * EstimateSize of apiextensions' sizeEstimator: walk the declared type along the path (after `self`).
   * Without a schema (DRA selectors: no SizeEstimator) nothing has a known size.
   */
  private pathSize(path: string[] | undefined): Estimate | undefined {
    if (!path || path.length === 0 || !this.root) return undefined;
    let t: RuleType | undefined = this.root;
    for (const step of path.slice(1)) {
      if (!t) return undefined;
      if (step === "@items" || step === "@values") t = t.kind === "list" ? t.item : t.kind === "map" ? t.value : undefined;
      else if (step === "@keys") {
        // The key type of every schema map is the plain string type, which has no size.
        if (t.kind !== "map") return undefined;
        return E(0, 0);
      } else if (t.kind === "object") t = t.fields.find((f) => escapeFieldName(f.name) === step)?.type;
      else return undefined;
    }
    return t ? E(0, t.maxElements ?? 0) : undefined;
  }

  private size(i: Info): Estimate {
    if (i.size) return i.size;
    const fromPath = this.pathSize(i.path);
    if (fromPath) return fromPath;
    return SCALARS.has(i.type) ? ONE : UNKNOWN_SIZE;
  }

  cost(n: Node): Info {
    const type = typeOf(n);
    switch (n.op) {
      case "value":
        return { cost: ZERO, size: literalSize(n.args), type, literal: n.args };
      case "id":
        return this.ident(n.args as string, type);
      case ".": {
        const [operand, field] = n.args as [Node, string];
        const o = this.cost(operand);
        const extra = isMap(o.type) || isStructNode(operand) ? ONE : ZERO;
        return { cost: plus(o.cost, extra), path: o.path ? [...o.path, field] : undefined, type };
      }
      case ".?":
      case "[?]": {
        const [operand, index] = n.args as [Node, Node | string];
        const o = this.cost(operand);
        const i = typeof index === "object" ? this.cost(index).cost : ZERO;
        return { cost: plus(ONE, plus(o.cost, i)), type };
      }
      case "[]": {
        const [operand, index] = n.args as [Node, Node];
        const o = this.cost(operand);
        const i = this.cost(index);
        const step = isList(o.type) ? "@items" : isMap(o.type) ? "@values" : undefined;
        return { cost: plus(ONE, plus(o.cost, i.cost)), path: o.path && step ? [...o.path, step] : undefined, type };
      }
      case "list": {
        const items = (n.args as Node[]).map((x) => this.cost(x).cost);
        return { cost: items.reduce(plus, E(LIST_CREATE)), size: E(items.length), type };
      }
      case "map": {
        const entries = n.args as [Node, Node][];
        const cost = entries.reduce((sum, [k, v]) => plus(sum, plus(this.cost(k).cost, this.cost(v).cost)), E(MAP_CREATE));
        return { cost, size: E(entries.length), type };
      }
      case "?:": {
        const [c, t, f] = (n.args as Node[]).map((x) => this.cost(x)) as [Info, Info, Info];
        return { cost: plus(c.cost, union(t.cost, f.cost)), size: union(this.size(t), this.size(f)), type };
      }
      case "&&":
      case "||": {
        const [l, r] = (n.args as Node[]).map((x) => this.cost(x)) as [Info, Info];
        return { cost: E(l.cost.min, add(l.cost.max, r.cost.max)), type };
      }
      case "!_":
      case "-_": {
        // cel-go's parser folds a negative number into one literal.
        const operand = n.args as Node;
        if (n.op === "-_" && operand.op === "value" && typeof operand.args !== "string" && typeof operand.args !== "boolean") {
          return { cost: ZERO, size: ONE, type };
        }
        return { cost: plus(ONE, this.cost(operand).cost), type };
      }
      case "call":
      case "rcall":
        return this.call(n, type);
      default:
        return this.operator(n, type);
    }
  }

  private ident(name: string, type: string): Info {
    const range = this.ranges.get(name)?.at(-1);
    if (range) {
      const step = isList(range.type) ? "@items" : isMap(range.type) ? "@keys" : undefined;
      return { cost: ONE, path: range.path && step ? [...range.path, step] : undefined, type };
    }
    return { cost: ONE, path: [name], type };
  }

  /** Binary operators: cel-go's overloads of `_==_`, `_<_`, `_+_`, `@in` and the rest. */
  private operator(n: Node, type: string): Info {
    const [l, r] = (n.args as Node[]).map((x) => this.cost(x)) as [Info, Info];
    const args = plus(l.cost, r.cost);
    switch (n.op) {
      case "==":
        if (l.type === r.type && CONSTANT_EQUALITY.has(l.type)) return { cost: plus(ONE, args), type };
        return { cost: plus(this.compareCost(l, r), args), type };
      case "!=":
        return { cost: plus(this.compareCost(l, r), args), type };
      case "<":
      case "<=":
      case ">":
      case ">=":
        if (isStringLike(l.type) && isStringLike(r.type)) return { cost: plus(this.compareCost(l, r), args), type };
        return { cost: plus(ONE, args), type };
      case "+": {
        if (isStringLike(l.type) || isList(l.type)) {
          const size = plus(this.size(l), this.size(r));
          const cost = isList(l.type) ? ONE : byFactor(size, STRING);
          return { cost: plus(cost, args), size, type };
        }
        return { cost: plus(ONE, args), type };
      }
      case "in":
        if (isList(r.type)) return { cost: plus(byFactor(this.size(r), 1), args), type };
        return { cost: plus(ONE, args), type };
      default:
        return { cost: plus(ONE, args), type };
    }
  }

  /** Equality and string ordering: the smaller operand's size, a tenth per unit. */
  private compareCost(l: Info, r: Info): Estimate {
    const smallestMax = Math.min(this.size(l).max, this.size(r).max);
    return byFactor(E(smallestMax > 0 ? 1 : 0, smallestMax), STRING);
  }

  private call(n: Node, type: string): Info {
    const [name, ...rest] = n.args as [string, ...unknown[]];
    let target: Node | undefined;
    let args: Node[];
    if (n.op === "rcall") [target, args] = rest as [Node, Node[]];
    else args = rest[0] as Node[];
    if (n.op === "call" && name === "has" && n.meta?.macro) {
      // has(x.f): the presence test costs nothing in Kubernetes (PresenceTestHasCost(false)).
      const select = args[0];
      const operand = select && select.op === "." ? (select.args as [Node])[0] : select;
      return { cost: operand ? this.cost(operand).cost : ZERO, type };
    }
    if (target && MACROS.has(name) && args[0]?.op === "id" && (args.length === 2 || args.length === 3)) {
      return this.comprehension(name, target, args, type);
    }
    // An optional entry of a list or map literal (optional-entries.ts) is no call in cel-go.
    if (name === OPTIONAL_ENTRY_FUNCTION && args[0]) return this.cost(args[0]);
    if (name === "cel.bind" || (name === "bind" && target?.op === "id" && target.args === "cel")) {
      const [, init, body] = args as [Node, Node, Node];
      return { cost: plus(E(LIST_CREATE), plus(this.cost(init).cost, this.cost(body).cost)), type };
    }
    // A namespaced function (ip.isCanonical, sets.contains) is one global function in cel-go.
    let fn = name;
    let t: Info | undefined;
    if (target) {
      const targetType = typeOf(target);
      if (target.op === "id" && targetType.endsWith("Namespace")) fn = `${target.args as string}.${name}`;
      else t = this.cost(target);
    }
    const a = args.map((x) => this.cost(x));
    const argSum = a.reduce((s, x) => plus(s, x.cost), ZERO);
    const base = t ? t.cost : ZERO;
    const est = this.functionCost(fn, t, a);
    return { cost: plus(base, plus(est.cost, argSum)), size: est.size, type };
  }

  /** The call's own cost (without its arguments) and result size: Kubernetes' estimator, then cel-go's. */
  private functionCost(fn: string, target: Info | undefined, args: Info[]): { cost: Estimate; size?: Estimate } {
    if (UNIT_COST_CALLS.has(fn)) return { cost: ONE };
    const [a0, a1] = args;
    switch (fn) {
      case "isSorted":
      case "sum":
      case "max":
      case "min":
      case "indexOf":
      case "lastIndexOf":
        if (target) {
          if (isList(target.type)) {
            const elType = target.type.slice(5, -1);
            let elCost = ONE;
            if (isStringLike(elType)) {
              const el: Info = { cost: ZERO, path: target.path ? [...target.path, "@items"] : undefined, type: elType };
              elCost = plus(elCost, byFactor(this.size(el), STRING));
            }
            return { cost: times(this.size(target), elCost) };
          }
          return { cost: byFactor(this.size(target), STRING) };
        }
        break;
      case "url":
        if (a0) {
          const sz = this.size(a0);
          return { cost: byFactor(sz, STRING), size: sz };
        }
        break;
      case "lowerAscii":
      case "upperAscii":
      case "substring":
      case "trim":
        if (target) {
          const sz = this.size(target);
          return { cost: byFactor(sz, STRING), size: sz };
        }
        break;
      case "replace":
        if (target && a0 && a1) return replaceCost(this.size(target), this.size(a0), this.size(a1));
        break;
      case "split":
        if (target) {
          const sz = this.size(target);
          let max = sz.max;
          const limit = args[1];
          if (limit?.literal !== undefined && limit.type === "int") max = Number(limit.literal);
          return { cost: byFactor(sz, 2 * STRING), size: E(0, max) };
        }
        break;
      case "join":
        if (target) {
          const list = this.size(target);
          let sz = ZERO;
          if (isList(target.type)) {
            const el: Info = { cost: ZERO, path: target.path ? [...target.path, "@items"] : undefined, type: target.type.slice(5, -1) };
            sz = times(list, this.size(el));
          }
          if (a0) {
            const separators = E(list.min > 0 ? list.min - 1 : 0, list.max > 0 ? list.max - 1 : 0);
            sz = plus(sz, times(this.size(a0), separators));
          }
          return { cost: byFactor(sz, STRING), size: sz };
        }
        break;
      case "find":
      case "findAll":
        if (target && a0) {
          const sz = this.size(target);
          return { cost: times(byFactor(plus(sz, ONE), STRING), byFactor(this.size(a0), REGEX)), size: E(0, sz.max) };
        }
        break;
      case "cidr":
      case "isIP":
      case "isCIDR":
      case "quantity":
      case "isQuantity":
        if (a0) return { cost: byFactor(this.size(a0), STRING) };
        break;
      case "ip":
        if (a0) return { cost: byFactor(this.size(a0), STRING) };
        return { cost: ONE };
      case "ip.isCanonical":
        if (a0) return { cost: byFactor(this.size(a0), 2 * STRING) };
        break;
      case "containsIP":
      case "containsCIDR":
        if (target && a0) {
          const ip = E(4, 16);
          let cost = byFactor(plus(ip, ip), STRING);
          if (fn === "containsCIDR") cost = plus(plus(cost, byFactor(ip, STRING)), ONE);
          if (a0.type === "string") cost = plus(cost, byFactor(this.size(a0), STRING));
          return { cost };
        }
        break;
      case "validate":
        if (target && a0) return { cost: byFactor(byFactor(this.size(a0), STRING), MAX_NAME_FORMAT_REGEX_SIZE * REGEX) };
        break;
      case "sets.contains":
      case "sets.intersects":
      case "sets.equivalent":
        if (a0 && a1) return { cost: plus(byFactor(times(this.size(a0), this.size(a1)), fn === "sets.equivalent" ? 2 : 1), ONE) };
        break;
      // cel-go's own estimates (functionCost's overload switch).
      case "format":
        if (target && isStringLike(target.type)) return { cost: byFactor(this.size(target), STRING) };
        break;
      case "bytes":
      case "string":
        if (a0 && ((fn === "bytes" && a0.type === "string") || (fn === "string" && a0.type === "bytes"))) {
          const sz = this.size(a0);
          return { cost: byFactor(sz, STRING), size: fn === "bytes" ? E(sz.min, mul(sz.max, 4)) : E(Math.floor(sz.min / 4), sz.max) };
        }
        break;
      case "strings.quote":
        if (a0) {
          const sz = this.size(a0);
          return { cost: byFactor(sz, STRING), size: E(add(sz.min, 2), add(mul(sz.max, 2), 2)) };
        }
        break;
      case "startsWith":
      case "endsWith":
        if (target && a0 && target.type === "string") return { cost: byFactor(this.size(a0), STRING) };
        break;
      case "matches":
        if (target && a0) return { cost: times(byFactor(plus(this.size(target), ONE), STRING), byFactor(this.size(a0), REGEX)) };
        break;
      case "contains":
        if (target && a0 && target.type === "string") {
          return { cost: times(byFactor(this.size(target), STRING), byFactor(this.size(a0), STRING)) };
        }
        break;
    }
    return { cost: ONE };
  }

  /** A macro as the comprehension cel-go expands it to (parser/macro.go). */
  private comprehension(name: string, target: Node, args: Node[], type: string): Info {
    const range = this.cost(target);
    const variable = args[0]!.args as string;
    const scopes = this.ranges.get(variable) ?? [];
    this.ranges.set(variable, [...scopes, range]);
    const body = args.slice(1).map((x) => this.cost(x).cost);
    this.ranges.set(variable, scopes);
    const accu = ONE;
    let init = ZERO;
    let loop = ZERO;
    let step: Estimate;
    let result = accu;
    const [p, q] = body as [Estimate, Estimate | undefined];
    switch (name) {
      case "all":
        // loop: @not_strictly_false(accu); step: accu && p
        loop = plus(ONE, accu);
        step = E(accu.min, add(accu.max, p.max));
        break;
      case "exists":
        // loop: @not_strictly_false(!accu); step: accu || p
        loop = plus(ONE, plus(ONE, accu));
        step = E(accu.min, add(accu.max, p.max));
        break;
      case "exists_one":
        // step: p ? accu + 1 : accu; result: accu == 1
        step = plus(p, union(plus(ONE, accu), accu));
        result = plus(ONE, accu);
        break;
      case "map": {
        // init []; step: accu + [f] (or filter ? accu + [f] : accu)
        init = E(LIST_CREATE);
        const append = (f: Estimate) => plus(ONE, plus(accu, plus(E(LIST_CREATE), f)));
        step = q ? plus(p, union(append(q), accu)) : append(p);
        break;
      }
      default:
        // filter: p ? accu + [x] : accu
        init = E(LIST_CREATE);
        step = plus(p, union(plus(ONE, plus(accu, plus(E(LIST_CREATE), ONE))), accu));
    }
    const count = this.size(range);
    const cost = plus(plus(plus(range.cost, init), result), times(count, plus(step, loop)));
    return { cost, size: count, type };
  }
}

function literalSize(v: unknown): Estimate {
  if (typeof v === "string") return E([...v].length);
  if (v instanceof Uint8Array) return E(v.length);
  return E(1);
}

function replaceCost(sz: Estimate, toReplace: Estimate, replaceWith: Estimate): { cost: Estimate; size: Estimate } {
  let countMax: number;
  let countMin: number;
  let retainedMax = 0;
  let retainedMin = 0;
  if (toReplace.min === 0) {
    countMax = sz.max < U64 ? sz.max + 1 : sz.max;
    retainedMax = sz.max;
  } else if (replaceWith.max <= toReplace.min) {
    countMax = 0;
    retainedMax = sz.max;
  } else countMax = Math.ceil(sz.max / toReplace.min);
  if (toReplace.max === 0) {
    countMin = sz.min < U64 ? sz.min + 1 : sz.min;
    retainedMin = sz.min;
  } else if (toReplace.max <= replaceWith.min) {
    countMin = 0;
    retainedMin = sz.min;
  } else countMin = Math.ceil(sz.min / toReplace.max);
  const size = plus(times(E(countMin, countMax), replaceWith), E(retainedMin, retainedMax));
  return { cost: byFactor(sz, 2 * STRING), size };
}

/**
 * The estimated cost (min and max) of a checked expression whose `self` has type `root`; without a
 * root, sizes are unknown (unbounded) but for scalars and literals, as for DRA device selectors.
 */
export function estimateCost(ast: unknown, root: RuleType | undefined): Estimate {
  return new Coster(root).cost(ast as Node).cost;
}
