// cel-go's optional macros, which Kubernetes has with OptionalTypes and @marcbachmann/cel-js 8 lacks:
// `o.optMap(x, expr)` is optional.of(expr) with x bound to o's value, or none when o is none;
// `o.optFlatMap(x, expr)` is expr (itself an optional) with x bound, or none.
import { type Environment, Optional } from "@marcbachmann/cel-js";

/** The engine's macro interfaces, as far as these macros use them (pinned by engine-contract.test.ts). */
interface MacroNode {
  op: string;
  args: unknown;
}
interface CheckedType {
  kind: string;
  valueType?: CheckedType;
}
interface Scope {
  forkWithVariable(name: string, type: CheckedType): Scope;
  reuse(parent: unknown): Scope;
  setIterValue(value: unknown, evaluator: unknown): Scope;
}
interface Checker {
  check(node: MacroNode, ctx: unknown): CheckedType;
  dynType: CheckedType;
  registry: { getOptionalType(t: CheckedType): CheckedType };
  createError(code: string, message: string, node: MacroNode): Error;
}
interface Evaluator {
  run(node: MacroNode, ctx: unknown): unknown;
}

interface OptionalMacro {
  receiver: MacroNode;
  variable: string;
  body: MacroNode;
  scope?: Scope;
}

function optionalMacro(name: "optMap" | "optFlatMap") {
  return ({ receiver, args }: { receiver: MacroNode; args: MacroNode[] }) => {
    const [variable, body] = args as [MacroNode, MacroNode];
    if (variable.op !== "id") throw new Error(`${name}() variable name must be a simple identifier`);
    return {
      receiver,
      variable: variable.args as string,
      body,
      typeCheck(checker: Checker, m: OptionalMacro, ctx: Scope): CheckedType {
        const type = checker.check(m.receiver, ctx);
        if (type.kind !== "optional" && type.kind !== "dyn") {
          throw checker.createError("no_matching_overload", `found no matching overload for '${name}'`, m.receiver);
        }
        // A value type left open (optional.none()'s T) is dyn, as in cel-go.
        const valueType = type.valueType && type.valueType.kind !== "param" ? type.valueType : checker.dynType;
        m.scope = ctx.forkWithVariable(m.variable, valueType);
        const result = checker.check(m.body, m.scope);
        if (name === "optMap") return checker.registry.getOptionalType(result);
        if (result.kind !== "optional" && result.kind !== "dyn") {
          throw checker.createError("no_matching_overload", "optFlatMap() expression must return an optional", m.body);
        }
        return result;
      },
      evaluate(ev: Evaluator, m: OptionalMacro, ctx: unknown): unknown {
        const o = ev.run(m.receiver, ctx);
        if (!(o instanceof Optional)) throw new Error(`no such overload: ${name}`);
        if (!o.hasValue()) return Optional.none();
        const value = ev.run(m.body, m.scope!.reuse(ctx).setIterValue(o.value(), ev));
        return name === "optMap" ? Optional.of(value) : value;
      },
    };
  };
}

export function registerOptionalMacros(env: Environment): Environment {
  return env
    .registerFunction("optional<A>.optMap(ast, ast): optional<dyn>", optionalMacro("optMap") as never)
    .registerFunction("optional<A>.optFlatMap(ast, ast): optional<dyn>", optionalMacro("optFlatMap") as never);
}
