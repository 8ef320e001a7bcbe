// Where @marcbachmann/cel-js 8 and cel-go (as Kubernetes configures it) disagree, a parsed expression
// is adjusted node by node, never the engine's shared registry:
// - before type checking: has() accepts any select (`has(self[0].matches)`), as cel-go does, and a
//   value of an open type parameter (`optional.none().?x`, `[].all(e, e > 0)`) is read as dyn;
// - after type checking: matches() runs RE2 (re2.ts), `==`/`!=` compare lists, maps and schema objects
//   structurally with list-type semantics, `+` concatenates set and map lists as Kubernetes does;
//   results keep cel-go's ranges (value-ranges.ts), numbers compare across types
//   (numeric-comparison.ts), null items read as Kubernetes reads them, has() and selection through
//   an optional, string() of bytes;
// - cel-go's AST validators: a constant pattern, duration or timestamp must be valid
//   ("invalid matches argument").
// The node shapes relied on here are pinned by test/engine-contract.test.ts and exercised by the
// cel-spec conformance suite (test/conformance.test.ts).
import { isUtf8 } from "node:buffer";
import { Environment, Optional } from "@marcbachmann/cel-js";
import { compareNumbersAcrossTypes } from "./numeric-comparison.js";
import { OPTIONAL_ENTRY_FUNCTION, dropAbsentEntries } from "./optional-entries.js";
import { compileRegexp, regexpMatches } from "./re2.js";
import { asWritten, engineTimestampText, timestampOperation } from "./timestamps.js";
import { checkRange, rangeError } from "./value-ranges.js";
import { INVALID_NULL, INVALID_NULL_MESSAGE, celEquals, concatLists, isStructured } from "./values.js";

/** An AST node of the engine, as far as these passes use it. */
interface Node {
  op: string;
  args: unknown;
  start: number;
  readonly meta: Record<string, unknown> & { macro?: Macro; alternate?: Node };
  handle?: (...params: unknown[]) => unknown;
  checkedType?: unknown;
}

interface Macro {
  args: Node[];
  macroHasProps?: Node[];
  typeCheck(checker: Checker, macro: Macro, ctx: unknown): unknown;
  evaluate(evaluator: { run(node: Node, ctx: unknown): unknown }, macro: Macro, ctx: unknown): unknown;
}

interface Checker {
  check(node: Node, ctx: unknown): unknown;
  getType(name: string): unknown;
  createError(code: string, message: string, node: Node): Error;
}

const isNode = (x: unknown): x is Node =>
  typeof x === "object" && x !== null && typeof (x as Node).op === "string" && "meta" in (x as object);

/** Every node reachable from `root`, macro expansions included, each once. */
function walk(root: Node, visit: (n: Node) => void): void {
  const seen = new Set<unknown>();
  const descend = (x: unknown): void => {
    if (typeof x !== "object" || x === null || seen.has(x)) return;
    seen.add(x);
    if (isNode(x)) {
      visit(x);
      descend(x.args);
      descend(x.meta.alternate);
      const macro = x.meta.macro as unknown as Record<string, unknown> | undefined;
      if (macro) for (const v of Object.values(macro)) descend(v);
      return;
    }
    if (Array.isArray(x)) for (const v of x) descend(v);
    else if (Object.getPrototypeOf(x) === Object.prototype) for (const v of Object.values(x)) descend(v);
  };
  descend(root);
}

/**
 * cel-go's has(): the argument is any field selection; the operand is checked as an expression. The
 * engine only allows a chain of selections from a variable, so `has(self[0].x)` failed to compile.
 */
function typeCheckHas(checker: Checker, macro: Macro, ctx: unknown): unknown {
  const argument = macro.args[0];
  if (argument?.op !== ".")
    throw checker.createError("invalid_macro_argument", "invalid argument to has() macro", argument ?? ({} as Node));
  // The selection is checked as an expression: an undefined field is a compile error, as in cel-go.
  checker.check(argument, ctx);
  if (operandType(argument) === "optional") {
    // A selection on an optional (`has(optional.of(m).c)`) is optional too: present when it has a value.
    macro.evaluate = (evaluator, _macro, scope) => {
      const selected = evaluator.run(argument, scope);
      return selected instanceof Optional ? selected.hasValue() : selected !== undefined;
    };
  }
  if (!macro.macroHasProps) {
    const props: Node[] = [];
    let node: Node = argument;
    while (node.op === "." || node.op === ".?") {
      props.push(node);
      node = (node.args as [Node, string])[0];
    }
    props.push(node);
    macro.macroHasProps = props;
  }
  return checker.getType("bool");
}

/** A checked type of the engine, as far as selection on a type parameter needs it. */
interface CheckedType {
  kind: string;
  valueType?: CheckedType;
}

interface TypeChecker extends Checker {
  dynType: CheckedType;
  registry: { getOptionalType(t: CheckedType): CheckedType };
}

type NodeCheck = (checker: TypeChecker, node: Node, ctx: unknown) => unknown;

/** How many leading operands of a node are read as dyn when their type is an open parameter. */
const OPEN_OPERANDS = new Map<string, number>([
  ...[".", ".?", "[]", "[?]"].map((op) => [op, 1] as const),
  ...["==", "!=", "<", "<=", ">", ">=", "+", "-", "*", "/", "%"].map((op) => [op, 2] as const),
]);

/**
 * cel-go reads a value whose type is a parameter left open as dyn: it selects and indexes it
 * (`optional.none().?x`, `{}.?k.x`) and compares it (`[].all(e, e > 0)`); the engine refused these
 * ("Cannot index type", overlapping overloads). The operands are checked first and an open type read
 * as dyn (in an optional, optional<dyn>), then the node is checked as before.
 */
function openTypesAsDyn(n: Node, operands: number): void {
  const check = n.meta.check as NodeCheck;
  n.meta.check = (checker: TypeChecker, node: Node, ctx: unknown) => {
    for (const operand of (node.args as Node[]).slice(0, operands)) {
      const type = checker.check(operand, ctx) as CheckedType;
      if (type.kind === "param") operand.checkedType = checker.dynType;
      else if (type.kind === "optional" && type.valueType?.kind === "param") {
        operand.checkedType = checker.registry.getOptionalType(checker.dynType);
      }
    }
    return check(checker, node, ctx);
  };
}

/** Before type checking. */
export function beforeCheck(root: unknown): void {
  walk(root as Node, (n) => {
    if (n.op === "call" && (n.args as [string])[0] === "has" && n.meta.macro) n.meta.macro.typeCheck = typeCheckHas;
    const operands = OPEN_OPERANDS.get(n.op);
    if (operands) openTypesAsDyn(n, operands);
  });
}

export interface LiteralIssue {
  message: string;
  range: { start: number };
}

const literalString = (n: Node | undefined): string | undefined => (n?.op === "value" && typeof n.args === "string" ? n.args : undefined);

/** cel-go's ValidateRegexLiterals, ValidateDurationLiterals and ValidateTimestampLiterals. */
export function literalIssues(root: unknown, env: Environment): LiteralIssue[] {
  const issues: LiteralIssue[] = [];
  walk(root as Node, (n) => {
    if (n.op !== "call" && n.op !== "rcall") return;
    const name = (n.args as [string])[0];
    // cel-go checks the first argument after the receiver, whichever call style.
    const first = n.op === "rcall" ? (n.args as [string, Node, Node[]])[2][0] : (n.args as [string, Node[]])[1][0];
    const seconds =
      first?.op === "value" && typeof first.args === "bigint"
        ? first.args
        : first?.op === "-_" && (first.args as Node).op === "value" && typeof (first.args as Node).args === "bigint"
          ? -((first.args as Node).args as bigint)
          : undefined;
    if (name === "timestamp" && n.op === "call" && seconds !== undefined) {
      // cel-go's ValidateTimestampLiterals: seconds within years 1 to 9999.
      if (seconds < -62135596800n || seconds > 253402300799n)
        issues.push({ message: "invalid timestamp argument", range: { start: first!.start } });
      return;
    }
    const literal = literalString(first);
    if (literal === undefined || !first) return;
    if (name === "matches" && !compileRegexp(literal).ok) {
      issues.push({ message: "invalid matches argument", range: { start: first.start } });
    } else if ((name === "duration" || name === "timestamp") && n.op === "call") {
      try {
        const text = name === "duration" ? goDuration(literal) : engineTimestampText(literal);
        const value = env.evaluate(`${name}(${JSON.stringify(text)})`);
        if (rangeError(value)) throw new Error("out of range");
      } catch {
        issues.push({ message: `invalid ${name} argument`, range: { start: first.start } });
      }
    }
  });
  return issues;
}

const typeName = (n: Node): string => {
  const t = n.checkedType as { name?: string } | undefined;
  return (t?.name ?? "dyn").replaceAll("<", "(").replaceAll(">", ")");
};

/** cel-go has no `[]` on a schema object (`self.a['b']`); the engine allows it. */
export function objectIndexIssue(root: unknown): LiteralIssue | undefined {
  let issue: LiteralIssue | undefined;
  walk(root as Node, (n) => {
    if (issue || n.op !== "[]") return;
    const [operand, index] = n.args as [Node, Node];
    const t = typeName(operand);
    if (t.startsWith("selfType")) {
      issue = { message: `found no matching overload for '_[_]' applied to '(${t}, ${typeName(index)})'`, range: { start: n.start } };
    }
  });
  return issue;
}

/**
 * cel-go's ValidateHomogeneousAggregateLiterals: list elements, map keys and map values of a literal
 * share one type, except inside the arguments of string.format(), which mixes them by design.
 */
export function aggregateLiteralIssue(root: unknown): LiteralIssue | undefined {
  const exempt = new Set<Node>();
  walk(root as Node, (n) => {
    if (n.op === "rcall" && (n.args as [string])[0] === "format") {
      walk({ op: "exempt", args: (n.args as [string, Node, Node[]])[2], start: 0, meta: {} }, (inner) => exempt.add(inner));
    }
  });
  let issue: LiteralIssue | undefined;
  walk(root as Node, (n) => {
    if (issue || exempt.has(n)) return;
    const groups: Node[][] =
      n.op === "list" && Array.isArray(n.args)
        ? [n.args as Node[]]
        : n.op === "map" && Array.isArray(n.args)
          ? [(n.args as [Node, Node][]).map((e) => e[0]), (n.args as [Node, Node][]).map((e) => e[1])]
          : [];
    for (const group of groups) {
      const [first, ...rest] = group;
      if (!first) continue;
      const expected = typeName(first);
      // A type parameter (optional.none()'s T) unifies with any type, as dyn does.
      const open = (t: string) => t === "dyn" || /^[A-Z]$/.test(t);
      const odd = rest.find((e) => typeName(e) !== expected && !open(typeName(e)) && !open(expected));
      if (odd) {
        issue = { message: `expected type '${expected}' but found '${typeName(odd)}'`, range: { start: odd.start } };
        return;
      }
    }
  });
  return issue;
}

/** Go's time.ParseDuration takes a bare zero ("0", "-0") without a unit; the engine does not. */
const goDuration = (text: string): string => (/^[-+]?0$/.test(text) ? "0s" : text);

/** Go's unicode.IsSpace, which strings.TrimSpace (cel-go's trim()) trims. */
const goSpace = "\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const goTrim = new RegExp(`^[${goSpace}]+|[${goSpace}]+$`, "g");

/** cel-go's strings extension where the engine's differs: ASCII-only case mapping, Go's whitespace. */
const stringFixes = new Map<string, (s: string) => string>([
  ["lowerAscii", (s) => s.replace(/[A-Z]+/g, (c) => c.toLowerCase())],
  ["upperAscii", (s) => s.replace(/[a-z]+/g, (c) => c.toUpperCase())],
  ["trim", (s) => s.replace(goTrim, "")],
]);

const timestampAccessors = new Set([
  "getFullYear",
  "getMonth",
  "getDate",
  "getDayOfMonth",
  "getDayOfWeek",
  "getDayOfYear",
  "getHours",
  "getMinutes",
  "getSeconds",
  "getMilliseconds",
]);

/**
 * After type checking: RE2 matches(), Kubernetes' equality and list concatenation, cel-go's strings
 * extension and timestamp accessors where the engine differs, the left error first in `&&`/`||`.
 */
export function afterCheck(root: unknown, options: { structuralEquality: boolean }): void {
  leftErrorFirst(root);
  walk(root as Node, (n) => {
    if (n.op === "map") keepMapKeyTypes(n);
    const original = n.handle;
    if (!original) return;
    if ((n.op === "rcall" || n.op === "call") && (n.args as [string])[0] === "matches") {
      // rcall handles take (values, evaluator, node), call handles (values, node, evaluator).
      n.handle = (values: unknown, ...rest: unknown[]) => {
        const [text, pattern] = values as unknown[];
        if (typeof text === "string" && typeof pattern === "string") return regexpMatches(text, pattern);
        return original(values, ...rest);
      };
    } else if (n.op === "call" && (n.args as [string])[0] === "duration") {
      n.handle = (values: unknown, ...rest: unknown[]) => {
        const [text] = values as unknown[];
        return typeof text === "string" ? original([goDuration(text)], ...rest) : original(values, ...rest);
      };
    } else if (n.op === "call" && (n.args as [string])[0] === "string") {
      // cel-go converts bytes to a string only when they are valid UTF-8 (the engine replaced them).
      n.handle = (values: unknown, ...rest: unknown[]) => {
        const [bytes] = values as unknown[];
        if (bytes instanceof Uint8Array && !isUtf8(bytes)) throw new Error("invalid UTF-8 in bytes, cannot convert to string");
        return original(values, ...rest);
      };
    } else if (n.op === "rcall" && stringFixes.has((n.args as [string])[0])) {
      const fix = stringFixes.get((n.args as [string])[0])!;
      n.handle = (values: unknown, ...rest: unknown[]) => {
        const [text] = values as unknown[];
        return typeof text === "string" ? fix(text) : original(values, ...rest);
      };
    } else if (n.op === "rcall" && timestampAccessors.has((n.args as [string])[0])) {
      // cel-go takes a fixed offset ("+11:00", "02:00") where an IANA zone name is expected.
      n.handle = (values: unknown, ...rest: unknown[]) => {
        const [d, zone] = values as [unknown, unknown];
        const m = typeof zone === "string" ? /^([+-])?(\d{2}):(\d{2})$/.exec(zone) : null;
        if (!(d instanceof Date) || !m) return original(values, ...rest);
        const offset = (m[1] === "-" ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) * 60_000;
        return original([new Date(d.getTime() + offset), "UTC"], ...rest);
      };
    } else if ((n.op === "." || n.op === ".?") && operandType(n) === "optional") {
      // cel-go selects a field of a present optional's value, which must have fields: on null or a
      // scalar the key is missing (the engine gave optional.none()).
      n.handle = (left: unknown, field: unknown, ...rest: unknown[]) => {
        const value = left instanceof Optional && left.hasValue() ? left.value() : undefined;
        if (value === null || (value !== undefined && typeof value !== "object")) throw new Error(`no such key: ${String(field)}`);
        return original(left, field, ...rest);
      };
    } else if (options.structuralEquality && (n.op === "==" || n.op === "!=")) {
      const negate = n.op === "!=";
      n.handle = (left: unknown, right: unknown, ...rest: unknown[]) =>
        isStructured(left) || isStructured(right) ? celEquals(left, right) !== negate : original(left, right, ...rest);
    } else if (options.structuralEquality && n.op === "+") {
      n.handle = (left: unknown, right: unknown, ...rest: unknown[]) =>
        Array.isArray(left) && Array.isArray(right) ? concatLists(left, right) : original(left, right, ...rest);
    }
    toTheNanosecond(n);
    checkRange(n);
    compareNumbersAcrossTypes(n);
    passNullItems(n);
  });
}

const TIMESTAMP_OPERATORS = new Set(["+", "-", "==", "!=", "<", "<=", ">", ">="]);

/** Timestamps keep their nanoseconds (timestamps.ts) through parsing, arithmetic and comparison. */
function toTheNanosecond(n: Node): void {
  const original = n.handle;
  if (!original) return;
  if (n.op === "call" && (n.args as [string])[0] === "timestamp") {
    n.handle = (values: unknown, ...rest: unknown[]) => {
      const [text] = values as unknown[];
      if (typeof text !== "string") return original(values, ...rest);
      const result = original([engineTimestampText(text)], ...rest);
      return result instanceof Date ? asWritten(result, text) : result;
    };
  } else if (TIMESTAMP_OPERATORS.has(n.op)) {
    const op = n.op;
    n.handle = (left: unknown, right: unknown, ...rest: unknown[]) => {
      const exact = timestampOperation(op, left, right);
      return exact ? exact.value : original(left, right, ...rest);
    };
  }
}

/**
 * The engine builds a map literal as a plain object, whose keys are strings: `{6: 'six'}` iterated
 * gave "6". A literal with int or bool keys is built as a Map, so its keys keep their CEL type.
 */
function keepMapKeyTypes(n: Node): void {
  const keyKind = (n.checkedType as { keyType?: { kind?: string; name?: string } } | undefined)?.keyType;
  if (keyKind?.name !== "int" && keyKind?.name !== "bool") return;
  const node = n as Node & { evaluate(evaluator: { run(node: Node, ctx: unknown): unknown }, self: unknown, ctx: unknown): unknown };
  node.evaluate = (evaluator, _self, ctx) =>
    new Map((n.args as [Node, Node][]).map(([key, value]) => [evaluator.run(key, ctx), evaluator.run(value, ctx)]));
}

const NULL_TYPE = new Environment().evaluate("null_type");

/**
 * Kubernetes reads a null item of a typed list or map as null where the item schema is nullable, and
 * as invalid data where it is not; the engine's item type check refused both ("is not of type 'string',
 * got 'null'").
 */
function passNullItems(n: Node): void {
  const original = n.handle;
  if (!original) return;
  if (n.op === "call" && (n.args as [string])[0] === "type") {
    // The engine answers type() from the declared type; a null item is null_type.
    n.handle = (values: unknown, ...rest: unknown[]) => ((values as unknown[])[0] === null ? NULL_TYPE : original(values, ...rest));
    return;
  }
  if (n.op !== "[]" && n.op !== ".") return;
  n.handle = (container: unknown, key: unknown, ...rest: unknown[]) => {
    const item =
      Array.isArray(container) && typeof key === "bigint"
        ? container[Number(key)]
        : container instanceof Map
          ? container.get(key)
          : undefined;
    if (item === INVALID_NULL) throw new Error(INVALID_NULL_MESSAGE);
    return item === null ? null : original(container, key, ...rest);
  };
}

/** The kind of the checked type of a node's first operand. */
const operandType = (n: Node): string | undefined => ((n.args as [Node])[0].checkedType as { kind?: string } | undefined)?.kind;

const isOptionalEntry = (n: unknown): boolean =>
  typeof n === "object" && n !== null && (n as Node).op === "call" && (n as { args: [string] }).args[0] === OPTIONAL_ENTRY_FUNCTION;

/**
 * A node's own evaluation, to wrap: one set on the node by these passes, else the operator's — not the
 * engine's `ASTNode.evaluate`, which replaces itself by the operator's on its first call (a wrapper of
 * it would run once).
 */
function operatorEvaluate(n: Node): (...a: unknown[]) => unknown {
  const own = Object.hasOwn(n, "evaluate") ? (n as unknown as { evaluate: (...a: unknown[]) => unknown }).evaluate : undefined;
  return own ?? (n.meta.evaluate as (...a: unknown[]) => unknown);
}

/**
 * cel-go's `&&` and `||` when neither operand decides: the error reported is the left operand's
 * (the engine reports the right one's). The left operand runs again only on that error path.
 */
function leftErrorFirst(root: unknown): void {
  walk(root as Node, (n) => {
    if (n.op !== "&&" && n.op !== "||") return;
    const node = n as Node & { evaluate(evaluator: { run(node: unknown, ctx: unknown): unknown }, self: unknown, ctx: unknown): unknown };
    const original = operatorEvaluate(n);
    const [left] = n.args as [Node];
    node.evaluate = (evaluator, self, ctx) => {
      try {
        return original.call(node, evaluator, self, ctx);
      } catch (error) {
        evaluator.run(left, ctx);
        throw error;
      }
    };
  });
}

/** List and map literals with optional entries (optional-entries.ts) leave out the absent ones. */
export function dropAbsentOptionalEntries(root: unknown): void {
  walk(root as Node, (n) => {
    const optional =
      (n.op === "list" && (n.args as unknown[]).some(isOptionalEntry)) ||
      (n.op === "map" && (n.args as [unknown, unknown][]).some(([, v]) => isOptionalEntry(v)));
    if (!optional) return;
    const node = n as Node & { evaluate(...a: unknown[]): unknown };
    const original = operatorEvaluate(n);
    node.evaluate = (...a: unknown[]) => {
      const value = original.apply(node, a);
      return value instanceof Promise ? value.then(dropAbsentEntries) : dropAbsentEntries(value);
    };
  });
}
