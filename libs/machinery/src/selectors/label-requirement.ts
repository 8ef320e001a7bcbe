// One term of a label selector (k8s.io/apimachinery/pkg/labels: Requirement), with Kubernetes'
// construction errors, matching rules and canonical text.
import { goAggregate, goBadValue, goJSON, goQuote } from "../values/go-format.js";
import { isQualifiedName, isValidLabelValue } from "../validation/names.js";
import { SelectorError } from "./selector-error.js";
import { compareUtf8 } from "../values/utf8.js";

/** selection.Operator values; `!` is DoesNotExist, `gt`/`lt` compare integers. */
export type LabelOperator = "!" | "=" | "==" | "in" | "!=" | "notin" | "exists" | "gt" | "lt";

const binaryOperators: readonly LabelOperator[] = ["in", "notin", "=", "==", "!=", "gt", "lt"];
const unaryOperators: readonly LabelOperator[] = ["exists", "!"];
/** The order Kubernetes lists them in its messages. */
export const labelBinaryOperators = binaryOperators;
const validOperators: readonly LabelOperator[] = [...binaryOperators, ...unaryOperators];

export interface LabelRequirement {
  readonly key: string;
  readonly operator: LabelOperator;
  readonly values: readonly string[];
}

// field.Error.Error(): Kubernetes always prints "<path>: ", and a nil path prints as "<nil>".
const invalid = (path: string, value: unknown, detail: string) => `${path}: Invalid value: ${goBadValue(value)}: ${detail}`;

/** validateLabelKey: every broken rule joined by "; ", reported at `path`. */
export function labelKeyError(key: string, path: string): string | undefined {
  const errs = isQualifiedName(key);
  return errs.length ? invalid(path, key, errs.join("; ")) : undefined;
}

/**
 * labels.NewRequirement. Throws a SelectorError carrying Kubernetes' aggregated field errors, e.g.
 * `values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty`.
 * `values` are kept as given (Kubernetes does not sort or deduplicate here).
 */
export function newLabelRequirement(key: string, operator: LabelOperator, values: readonly string[] | null = null): LabelRequirement {
  const errs: string[] = [];
  const keyErr = labelKeyError(key, "key");
  if (keyErr) errs.push(keyErr);
  const vals = values ?? [];
  // Kubernetes prints the slice it was given: a nil slice is `null`, an empty one `[]`.
  const shown = values === null ? null : vals;
  switch (operator) {
    case "in":
    case "notin":
      if (vals.length === 0) {
        errs.push(invalid("values", shown, "for 'in', 'notin' operators, values set can't be empty"));
      }
      break;
    case "=":
    case "==":
    case "!=":
      if (vals.length !== 1) errs.push(invalid("values", shown, "exact-match compatibility requires one single value"));
      break;
    case "exists":
    case "!":
      if (vals.length !== 0) {
        errs.push(invalid("values", shown, "values set must be empty for exists and does not exist"));
      }
      break;
    case "gt":
    case "lt":
      if (vals.length !== 1) {
        errs.push(invalid("values", shown, "for 'Gt', 'Lt' operators, exactly one value is required"));
      }
      vals.forEach((v, i) => {
        if (parseInt64(v) === undefined) {
          errs.push(invalid(`values[${i}]`, v, "for 'Gt', 'Lt' operators, the value must be an integer"));
        }
      });
      break;
    default:
      errs.push(`operator: Unsupported value: ${goJSON(operator)}: supported values: ${validOperators.map(goQuote).join(", ")}`);
  }
  vals.forEach((v, i) => {
    const msgs = isValidLabelValue(v);
    if (msgs.length) errs.push(invalid(`values[${i}][${key}]`, v, msgs.join("; ")));
  });
  if (errs.length) throw new SelectorError(goAggregate(errs));
  return { key, operator, values: vals };
}

const int64Min = -(2n ** 63n);
const int64Max = 2n ** 63n - 1n;

/** strconv.ParseInt(s, 10, 64): optional sign, decimal digits, within int64. */
function parseInt64(s: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(s)) return undefined;
  const n = BigInt(s);
  return n < int64Min || n > int64Max ? undefined : n;
}

export type Labels = Readonly<Record<string, string>> | null | undefined;

/** Own keys only: a label named "constructor" must not find Object.prototype's. */
export const lookupLabel = (labels: Labels, key: string): string | undefined =>
  labels && Object.hasOwn(labels, key) ? labels[key] : undefined;

export function labelRequirementMatches(r: LabelRequirement, labels: Labels): boolean {
  const value = lookupLabel(labels, r.key);
  switch (r.operator) {
    case "in":
    case "=":
    case "==":
      return value !== undefined && r.values.includes(value);
    case "notin":
    case "!=":
      return value === undefined || !r.values.includes(value);
    case "exists":
      return value !== undefined;
    case "!":
      return value === undefined;
    case "gt":
    case "lt": {
      if (value === undefined || r.values.length !== 1) return false;
      const have = parseInt64(value);
      const want = parseInt64(r.values[0] ?? "");
      if (have === undefined || want === undefined) return false;
      return r.operator === "gt" ? have > want : have < want;
    }
    default:
      return false;
  }
}

const operatorText: Record<LabelOperator, string> = {
  "=": "=",
  "==": "==",
  "!=": "!=",
  in: " in ",
  notin: " notin ",
  gt: ">",
  lt: "<",
  exists: "",
  "!": "",
};

/** Requirement.String(): `x in (a,b)`, `!x`, `x!=y`; several values print sorted. */
export function labelRequirementString(r: LabelRequirement): string {
  const head = (r.operator === "!" ? "!" : "") + r.key + (operatorText[r.operator] ?? "");
  if (r.operator === "exists" || r.operator === "!") return head;
  const values = r.values.length === 1 ? (r.values[0] ?? "") : [...r.values].sort(compareUtf8).join(",");
  return r.operator === "in" || r.operator === "notin" ? `${head}(${values})` : head + values;
}
