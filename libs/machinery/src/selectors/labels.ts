// Label selectors (k8s.io/apimachinery/pkg/labels and metav1.LabelSelectorAsSelector): parse the
// `labelSelector` query parameter or a spec's LabelSelector object, match label sets, print canonically.
//
// A bad `?labelSelector=` makes the apiserver answer 400 BadRequest (reason "BadRequest") whose message
// is exactly the SelectorError message thrown here: ListOptions decoding runs labels.Parse and
// ListResource wraps the error with errors.NewBadRequest(err.Error()), adding nothing. For example
// `?labelSelector=a b` →
//   unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt
// `?labelSelector=x/y/z` →
//   unable to parse requirement: <nil>: Invalid value: "x/y/z": a valid label key must consist of ...
// `?labelSelector=a,` → found '', expected: identifier after ','
import {
  type LabelOperator,
  type LabelRequirement,
  type Labels,
  labelRequirementMatches,
  labelRequirementString,
  lookupLabel,
  newLabelRequirement,
} from "./label-requirement.js";
import { parseLabelRequirements } from "./label-selector-parser.js";
import { goQuote } from "../values/go-format.js";
import { SelectorError } from "./selector-error.js";
import { compareUtf8 } from "../values/utf8.js";

export type { LabelOperator, LabelRequirement, Labels };
export { labelRequirementMatches, labelRequirementString, newLabelRequirement };

export interface LabelSelector {
  /** Sorted by key; all must match. */
  readonly requirements: readonly LabelRequirement[];
  /** labels.Nothing(): what a nil metav1.LabelSelector means — it matches no object at all. */
  readonly matchesNothing: boolean;
}

export const everythingLabelSelector: LabelSelector = Object.freeze({
  requirements: Object.freeze([]),
  matchesNothing: false,
});
export const nothingLabelSelector: LabelSelector = Object.freeze({
  requirements: Object.freeze([]),
  matchesNothing: true,
});

// Kubernetes sorts requirements by key after parsing so that String() is deterministic.
const byKey = (a: LabelRequirement, b: LabelRequirement) => compareUtf8(a.key, b.key);

/** labels.Parse. Throws SelectorError whose message is the apiserver's 400 message. */
export function parseLabelSelector(text: string): LabelSelector {
  const requirements = parseLabelRequirements(text).sort(byKey);
  return { requirements, matchesNothing: false };
}

/** Selector.Add: a new selector with the extra requirements, re-sorted by key. */
export function addLabelRequirements(selector: LabelSelector, ...more: LabelRequirement[]): LabelSelector {
  if (selector.matchesNothing) return selector;
  return { requirements: [...selector.requirements, ...more].sort(byKey), matchesNothing: false };
}

export function labelSelectorMatches(selector: LabelSelector, labels: Labels): boolean {
  if (selector.matchesNothing) return false;
  return selector.requirements.every((r) => labelRequirementMatches(r, labels));
}

/** Selector.Empty(): true when nothing is filtered out. The "nothing" selector is not empty. */
export const labelSelectorIsEverything = (selector: LabelSelector): boolean =>
  !selector.matchesNothing && selector.requirements.length === 0;

/** Selector.String(): e.g. `app=web,tier in (a,b),!canary`; empty for both everything and nothing. */
export const labelSelectorString = (selector: LabelSelector): string => selector.requirements.map(labelRequirementString).join(",");

/**
 * RequiresExactMatch: the single value `key` must have (`key=v`, `key==v`, `key in (v)`), judged by the
 * first requirement on that key, as Kubernetes does.
 */
export function labelSelectorRequiresExactMatch(selector: LabelSelector, key: string): string | undefined {
  const r = selector.requirements.find((q) => q.key === key);
  if (!r || !(r.operator === "=" || r.operator === "==" || r.operator === "in") || r.values.length !== 1) {
    return undefined;
  }
  return r.values[0];
}

/** SelectorFromSet: equality on every pair, unvalidated (as Kubernetes; the server validates). */
export function labelSelectorFromSet(set: Labels): LabelSelector {
  if (!set) return everythingLabelSelector;
  const requirements = Object.keys(set).map((key): LabelRequirement => ({ key, operator: "=", values: [lookupLabel(set, key) ?? ""] }));
  return { requirements: requirements.sort(byKey), matchesNothing: false };
}

export type LabelSelectorOperator = "In" | "NotIn" | "Exists" | "DoesNotExist";

/** metav1.LabelSelector as found in specs. */
export interface LabelSelectorObject {
  matchLabels?: Readonly<Record<string, string>> | null;
  matchExpressions?: readonly { key: string; operator: LabelSelectorOperator | string; values?: readonly string[] | null }[] | null;
}

const expressionOperators: Record<LabelSelectorOperator, LabelOperator> = {
  In: "in",
  NotIn: "notin",
  Exists: "exists",
  DoesNotExist: "!",
};

/**
 * metav1.LabelSelectorAsSelector: null/undefined selects nothing, `{}` selects everything. Throws
 * SelectorError with Kubernetes' text, e.g. `"Foo" is not a valid label selector operator` or
 * `values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty`.
 * Kubernetes walks matchLabels in random map order; we walk it sorted so the first error is stable.
 */
export function labelSelectorFromObject(object: LabelSelectorObject | null | undefined): LabelSelector {
  if (object === null || object === undefined) return nothingLabelSelector;
  const matchLabels = object.matchLabels ?? {};
  const expressions = object.matchExpressions ?? [];
  const labelKeys = Object.keys(matchLabels).sort(compareUtf8);
  if (labelKeys.length + expressions.length === 0) return everythingLabelSelector;
  const requirements: LabelRequirement[] = [];
  for (const key of labelKeys) requirements.push(newLabelRequirement(key, "=", [lookupLabel(matchLabels, key) ?? ""]));
  for (const expr of expressions) {
    const op = Object.hasOwn(expressionOperators, expr.operator) ? expressionOperators[expr.operator as LabelSelectorOperator] : undefined;
    if (!op) throw new SelectorError(`${goQuote(String(expr.operator ?? ""))} is not a valid label selector operator`);
    // Kubernetes copies values with append([]string(nil), ...): an empty list becomes nil and prints as null.
    const values = expr.values && expr.values.length > 0 ? [...expr.values] : null;
    requirements.push(newLabelRequirement(expr.key, op, values));
  }
  return { requirements: requirements.sort(byKey), matchesNothing: false };
}
