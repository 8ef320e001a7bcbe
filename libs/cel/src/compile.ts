// The one way orch compiles CEL, for CRD validation rules (crd-rules.ts) and admission expressions
// (admission-expressions.ts) alike: Kubernetes' base environment (k8s.io/apiserver/pkg/cel/environment
// base.go at 1.32: strings v2, sets, URL, regex, lists, quantity, IP, CIDR, format and optional types,
// homogeneous aggregate literals), cel-go's literals the engine does not parse rewritten first
// (literal-rewrites.ts, optional-entries.ts), cel-go's checks after type checking (literal validators,
// mixed literals), Kubernetes' semantics on the checked AST (kubernetes-semantics.ts), and each node
// priced for the runtime cost limit (runtime-cost.ts). Each user adds its variables to a clone of the
// base environment.
import { Environment, type Optional } from "@marcbachmann/cel-js";
import { registerExtensionLibraries } from "./extension-libraries.js";
import {
  afterCheck,
  aggregateLiteralIssue,
  beforeCheck,
  dropAbsentOptionalEntries,
  literalIssues,
  objectIndexIssue,
} from "./kubernetes-semantics.js";
import { registerQuantityAndSemver } from "./libraries.js";
import { rewriteLiterals } from "./literal-rewrites.js";
import { ABSENT_ENTRY, OPTIONAL_ENTRY_FUNCTION, rewriteOptionalEntries } from "./optional-entries.js";
import { registerOptionalMacros } from "./optional-macros.js";
import { planRuntimeCost } from "./runtime-cost.js";
import { registerStandardGaps } from "./standard-gaps.js";
import { INVALID_INT_OR_STRING_MESSAGE, InvalidIntOrString, celEquals } from "./values.js";

// ---------------------------------------------------------------------------------------------
// The base environment: the libraries every CEL environment of orch starts from.
// ---------------------------------------------------------------------------------------------

export const baseEnvironment = registerQuantityAndSemver(
  new Environment({ enableOptionalTypes: true, homogeneousAggregateLiterals: false }),
);

// Lists library (k8s.io/apiserver/pkg/cel/library/lists.go): ordering functions for the comparable
// element types (uints, durations and timestamps compare by their valueOf, bytes byte by byte), sums
// of the summable ones, indexOf for any element type.
const compare = (a: unknown, b: unknown): number => {
  if (a instanceof Uint8Array && b instanceof Uint8Array) return Buffer.compare(a, b);
  return (a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0;
};
const UnsignedInt = (baseEnvironment.evaluate("1u") as object).constructor as new (value: bigint) => object;
const Duration = (baseEnvironment.evaluate("duration('0s')") as object).constructor as new (seconds: bigint, nanos: number) => object;
const nanosOf = (d: unknown) => {
  const { seconds, nanos } = d as { seconds: bigint; nanos: number };
  return seconds * 1_000_000_000n + BigInt(nanos);
};
const sums: Record<string, (l: unknown[]) => unknown> = {
  int: (l) => l.reduce((a, b) => (a as bigint) + (b as bigint), 0n),
  // The engine's uint checks its range when built: an overflowing sum is an error, as in cel-go.
  uint: (l) => new UnsignedInt(l.reduce((a: bigint, b) => a + (b as { valueOf(): bigint }).valueOf(), 0n)),
  double: (l) => l.reduce((a, b) => (a as number) + (b as number), 0),
  "google.protobuf.Duration": (l) => {
    const total = l.reduce((a: bigint, d) => a + nanosOf(d), 0n);
    return new Duration(total / 1_000_000_000n, Number(total % 1_000_000_000n));
  },
};
for (const t of ["int", "uint", "double", "bool", "string", "bytes", "google.protobuf.Duration", "google.protobuf.Timestamp"] as const) {
  baseEnvironment.registerFunction(`list<${t}>.isSorted(): bool`, (l: unknown[]) =>
    l.every((x, i) => i === 0 || compare(l[i - 1], x) <= 0),
  );
  const sum = sums[t];
  if (sum) baseEnvironment.registerFunction(`list<${t}>.sum(): ${t}`, sum);
  for (const name of ["min", "max"] as const) {
    baseEnvironment.registerFunction(`list<${t}>.${name}(): ${t}`, (l: unknown[]) => {
      if (l.length === 0) throw new Error(`${name} called on empty list`);
      return l.reduce((a, b) => (compare(a, b) * (name === "min" ? 1 : -1) <= 0 ? a : b));
    });
  }
}
baseEnvironment
  .registerFunction("list<A>.indexOf(A): int", (l: unknown[], x: unknown) => BigInt(l.findIndex((y) => celEquals(y, x))))
  .registerFunction("list<A>.lastIndexOf(A): int", (l: unknown[], x: unknown) => BigInt(l.findLastIndex((y) => celEquals(y, x))));

// Kubernetes' other libraries (IP, CIDR, URL, format, sets, regex, strings.quote/format) and the
// strings extension's replace and charAt.
registerExtensionLibraries(baseEnvironment);
registerStandardGaps(baseEnvironment, celEquals);
registerOptionalMacros(baseEnvironment);
baseEnvironment.registerFunction(`${OPTIONAL_ENTRY_FUNCTION}(optional<A>): A`, (o: Optional) => (o.hasValue() ? o.value() : ABSENT_ENTRY));
baseEnvironment
  .registerFunction("string.replace(string, string): string", (s: string, a: string, b: string) => s.replaceAll(a, b))
  .registerFunction("string.replace(string, string, int): string", (s: string, a: string, b: string, n: bigint) => {
    if (n < 0n) return s.replaceAll(a, b);
    let out = s;
    let from = 0;
    for (let i = 0n; i < n; i++) {
      const at = out.indexOf(a, from);
      if (at < 0) break;
      out = out.slice(0, at) + b + out.slice(at + a.length);
      from = at + b.length;
    }
    return out;
  })
  .registerFunction("string.charAt(int): string", (s: string, i: bigint) => {
    const chars = [...s];
    if (i < 0n || i > BigInt(chars.length)) throw new Error(`index out of range: ${i}`);
    return chars[Number(i)] ?? "";
  });

// ---------------------------------------------------------------------------------------------
// Compile errors as cel-go words them
// ---------------------------------------------------------------------------------------------

export interface CelError {
  code?: string;
  summary?: string;
  message: string;
  name?: string;
  range?: { start: number };
  /** The AST node the engine's error is about. */
  node?: unknown;
}

/** cel-go prints types with parentheses: `list(string)`, `map(string, int)`. */
const goType = (t: string) => t.replaceAll("<", "(").replaceAll(">", ")");

interface CallNode {
  op: string;
  args: [string, ...unknown[]];
  argTypes?: { name: string }[];
}

/** cel-go's words for a call no overload matches: the function, then the receiver's and arguments' types. */
function callOverloadMessage(node: unknown): string | undefined {
  const call = node as CallNode | undefined;
  if (call?.op !== "call" && call?.op !== "rcall") return undefined;
  const args = (call.argTypes ?? []).map((t) => goType(t.name)).join(", ");
  const receiver = call.op === "rcall" ? goType((call.args[1] as { checkedType?: { name: string } }).checkedType?.name ?? "dyn") : "";
  return `found no matching overload for '${call.args[0]}' applied to '${receiver}${receiver ? "." : ""}(${args})'`;
}

/**
 * ANTLR's error for a selection of a keyword (`self.true`, `self.in`): the tokens `true`, `false`,
 * `null` and `in` are no IDENTIFIER. cel-go rewrites "no viable alternative at input '.true'" (dot
 * and keyword adjacent) as "mismatched input 'true' expecting IDENTIFIER" (parser.go SyntaxError).
 * Other reserved words (`self.if`) are identifiers there and select fields.
 */
function selectedKeyword(expression: string, offset: number): string | undefined {
  const word = /^(true|false|null|in)(?![A-Za-z0-9_])/.exec(expression.slice(offset))?.[1];
  const dot = /\.\s*$/.exec(expression.slice(0, offset));
  if (!word || !dot) return undefined;
  const input = `${dot[0]}${word}`;
  if (input === `.${word}` && word !== "in") return `mismatched input '${word}' expecting IDENTIFIER`;
  return `no viable alternative at input '${input}'`;
}

/** Where the argument list of a call node opens: after the receiver of `a.f(x)`, after the name of `f(x)`. */
function callParenthesis(expression: string, node: unknown, start: number): number {
  const call = node as (CallNode & { start?: number; end?: number }) | undefined;
  // The calls optional entries are rewritten to (`__optionalEntry`) stay at the entry.
  if ((call?.op !== "call" && call?.op !== "rcall") || call.args[0].startsWith("__")) return start;
  const receiverEnd = call.op === "rcall" ? (call.args[1] as { end?: number }).end : undefined;
  const from = receiverEnd ?? call.start ?? start;
  const at = expression.indexOf("(", from);
  return at >= 0 && at >= start ? at : start;
}

/** The function names an environment declares, any arity or call style (cel-go's LookupFunction). */
const declaredNames = new WeakMap<Environment, Set<string>>();
function declaresFunction(env: Environment, name: string): boolean {
  let names = declaredNames.get(env);
  if (!names) declaredNames.set(env, (names = new Set(env.getDefinitions().functions.map((f) => f.name))));
  return names.has(name);
}

/**
 * cel-go's issue text: `ERROR: <input>:1:6: message`, the source line and a caret. With `env`, a call
 * of a function it does not declare at all is cel-go's undeclared reference, not an overload mismatch.
 */
export function celIssue(expression: string, e: CelError, env?: Environment): string {
  const summary = e.summary ?? e.message;
  let message = summary;
  if (e.name === "ParseError") message = `Syntax error: ${summary}`;
  // cel-go reports a reserved word used as a name (`if`, `var`) outside ANTLR's syntax errors.
  if (e.code === "reserved_identifier") message = `reserved identifier: ${/: (.*)$/.exec(summary)?.[1] ?? ""}`;
  const keyword = e.code === "expected_token" ? selectedKeyword(expression, e.range?.start ?? 0) : undefined;
  if (keyword) message = `Syntax error: ${keyword}`;
  const subject = /: (.*)$/.exec(summary)?.[1] ?? "";
  if (e.code === "unknown_variable") message = `undeclared reference to '${subject}' (in container '')`;
  if (e.code === "no_such_key") message = `undefined field '${subject}'`;
  if (e.code === "no_matching_overload") {
    const call = e.node as CallNode | undefined;
    const undeclared = env && (call?.op === "call" || call?.op === "rcall") && !declaresFunction(env, call.args[0]);
    message = undeclared ? `undeclared reference to '${call.args[0]}' (in container '')` : (callOverloadMessage(e.node) ?? message);
  }
  const operator = /^no such overload: (.+) (==|!=|<|<=|>|>=|\+|-|\*|\/|%|in) (.+)$/.exec(summary);
  if (operator) {
    // cel-go names the operator's function and prints types with parentheses.
    const [, left, op, right] = operator as unknown as [string, string, string, string];
    const fn = op === "in" ? "@in" : `_${op}_`;
    message = `found no matching overload for '${fn}' applied to '(${goType(left)}, ${goType(right)})'`;
  }
  let offset = e.range?.start ?? 0;
  // cel-go places a field selection at its dot.
  if (e.code === "no_such_key" && expression[offset - 1] === ".") offset--;
  const before = expression.slice(0, offset);
  const line = before.split("\n").length;
  const column = offset - (before.lastIndexOf("\n") + 1);
  const source = (expression.split("\n")[line - 1] ?? "").replaceAll("\t", " ");
  return `ERROR: <input>:${line}:${column + 1}: ${message}\n | ${source}\n | ${".".repeat(Math.min(column, source.length))}^`;
}

/**
 * A value that does not match its schema, read by a rule: the engine refuses it as it reads it (a field
 * or item of another type than declared), as Kubernetes' lazy conversion (UnstructuredToVal) does, in
 * Kubernetes' words for a list or an object (a map, or a schema object type, `selfTypeN`).
 */
function invalidDataMessage(text: string): string | undefined {
  if (text === `Unsupported type: ${InvalidIntOrString.name}`) return INVALID_INT_OR_STRING_MESSAGE;
  const declared = /^(?:Field '[^']*'|List item with index '[^']*') is not of type '([^']+)', got '[^']*'$/.exec(text)?.[1];
  if (declared === undefined) return undefined;
  if (declared.startsWith("list<")) return "invalid data, expected an array for the provided schema with type=array";
  if (declared.startsWith("map<") || /^selfType\d+/.test(declared)) {
    return "invalid data, expected a map for the provided schema with type=object";
  }
  return undefined;
}

/** An evaluation error in cel-go's words. */
export function celRuntimeMessage(e: unknown): string {
  const err = e as CelError;
  const text = (err.summary ?? err.message ?? String(e)).trim();
  // cel-go: "index out of bounds: 100".
  const outOfBounds = /index out of bounds, index (-?\d+)/.exec(text);
  if (outOfBounds) return `index out of bounds: ${outOfBounds[1]}`;
  const invalid = invalidDataMessage(text);
  if (invalid) return invalid;
  // The engine capitalises its messages ("No such key"), Go does not; acronyms ("IP Address") stay.
  return /^[A-Z][a-z]/.test(text) ? text.charAt(0).toLowerCase() + text.slice(1) : text;
}

// ---------------------------------------------------------------------------------------------
// Compilation
// ---------------------------------------------------------------------------------------------

export type Parsed = ReturnType<Environment["parse"]>;

export interface CompileOptions {
  /** cel.OptOptimize's constant folding, which prices literals of constants at 0 (default: on, as Kubernetes). */
  constantFolding?: boolean;
  /**
   * `==` and `+` on lists with Kubernetes' list-type semantics and on schema objects field by field
   * (CRD rules; default). Admission expressions see untyped JSON and keep CEL's own equality.
   */
  structuralEquality?: boolean;
}

export function compileExpression(
  env: Environment,
  source: string,
  options: CompileOptions = {},
): { parsed: Parsed; type: string } | { issue: string } {
  // Literals the engine does not parse are rewritten (literal-rewrites.ts), and `[?x]` and `{?k: v}`
  // parsed as calls (optional-entries.ts); errors then point into that text.
  const literals = rewriteLiterals(source);
  const entries = rewriteOptionalEntries(literals?.text ?? source);
  const expression = entries?.text ?? literals?.text ?? source;
  const originalOffset = (offset: number) => {
    const beforeEntries = entries ? entries.originalOffset(offset) : offset;
    return literals ? literals.originalOffset(beforeEntries) : beforeEntries;
  };
  // Errors are shown in the author's text.
  const issue = (e: CelError) => {
    // cel-go places a call at its opening parenthesis.
    const start = e.range && e.code === "no_matching_overload" ? callParenthesis(expression, e.node, e.range.start) : e.range?.start;
    return celIssue(
      source,
      start !== undefined
        ? {
            code: e.code,
            name: e.name,
            summary: e.summary ?? e.message,
            message: e.message,
            node: e.node,
            range: { start: originalOffset(start) },
          }
        : e,
      env,
    );
  };
  let parsed: Parsed;
  try {
    parsed = env.parse(expression);
  } catch (e) {
    return { issue: issue(e as CelError) };
  }
  beforeCheck(parsed.ast);
  const checked = parsed.check();
  if (!checked.valid) return { issue: issue((checked.error ?? new Error("type check failed")) as CelError) };
  // Mixed literals are refused after checking, as cel-go's validator does, so string.format() may mix.
  const [literal] = [objectIndexIssue(parsed.ast), aggregateLiteralIssue(parsed.ast), ...literalIssues(parsed.ast, baseEnvironment)].filter(
    (x) => x !== undefined,
  );
  if (literal) return { issue: issue(literal) };
  afterCheck(parsed.ast, { structuralEquality: options.structuralEquality ?? true });
  if (entries) dropAbsentOptionalEntries(parsed.ast);
  planRuntimeCost(parsed.ast, options);
  return { parsed, type: checked.type ?? "dyn" };
}
