// The checks a CRD's own validation makes on the x-*-validations rules of a schema
// (apiextensions-apiserver pkg/apis/apiextensions/validation/validation.go): each rule compiles
// against its node's type and is boolean, a messageExpression compiles to a string, a fieldPath names
// a field of the node, a reason is one of the four, optionalOldSelf only on transition rules.
import type { JSONSchemaProps } from "@orch/api";
import { CRD_ESTIMATED_COST_LIMIT, CRD_RULE_ESTIMATED_COST_LIMIT, celCostErrorMessage } from "@orch/cel";
import { type FieldError, type FieldPath, fieldError } from "@orch/machinery";
import { rulesOf } from "./cel.js";
import { validFieldPath } from "./field-path.js";
import type { SchemaOptions } from "./types.js";
import { type SchemaNode, additionalSchema, compileNode } from "./structural.js";

/** The newline characters of CEL's grammar (validation.go's newlineMatcher). */
const hasLineBreaks = (text: string) => /[\n\r]/.test(text);

const reasons = ["FieldValueInvalid", "FieldValueForbidden", "FieldValueRequired", "FieldValueDuplicate"];

/** How many times a node's value can occur in one object; undefined when a list or map above is unbounded. */
type Cardinality = number | undefined;

/** The estimated cost of all rules of a schema (cel_validation.go TotalCost), and its largest parts. */
class TotalCost {
  total = 0;
  readonly mostExpensive: { at: FieldPath; cost: number }[] = [];

  observe(at: FieldPath, cost: number): void {
    this.total = Math.min(this.total + cost, 2 ** 64);
    // Rules under 1% of the limit are not named.
    if (cost < CRD_ESTIMATED_COST_LIMIT / 100) return;
    this.mostExpensive.push({ at, cost });
    this.mostExpensive.sort((a, b) => b.cost - a.cost);
    this.mostExpensive.splice(4);
  }
}

/** extractMaxElements: how many values a node holds for each of its own occurrences. */
function maxElements(s: SchemaNode): Cardinality {
  if (s.type === "object") return s.raw.additionalProperties !== undefined ? nonNegative(s.raw.maxProperties) : 1;
  if (s.type === "array") return nonNegative(s.raw.maxItems);
  return 1;
}

const nonNegative = (n: number | undefined) => (n === undefined ? undefined : Math.max(0, n));
const times = (a: Cardinality, b: Cardinality): Cardinality => (a === undefined || b === undefined ? undefined : Math.min(a * b, 2 ** 64));

/** What validateSchemaRules checks of the estimated costs. */
export interface RuleCostOptions {
  /** An update leaves this schema unchanged: no per-rule (or per-messageExpression) limit, the total still. */
  suppressPerExpressionCost?: boolean;
}

function nodeRuleErrors(
  s: SchemaNode,
  at: FieldPath,
  prefix: string,
  resourceRoot: boolean,
  cardinality: Cardinality,
  totalCost: TotalCost,
  costOptions: RuleCostOptions,
): FieldError[] {
  if (s.validations.length === 0) return [];
  const errs: FieldError[] = [];
  const list = at.child(`${prefix}-validations`);
  const { rules, initError, maxCardinality } = rulesOf(s, resourceRoot);
  if (initError) return [fieldError.invalid(list, s.validations, initError)];
  s.validations.forEach((rule, i) => {
    const compiled = rules[i];
    const ruleAt = list.index(i);
    // validation.go: a rule's estimated cost, times how often it can run, against the per-rule limit.
    const ruleCost = Math.min((compiled?.maxCost ?? 0) * (cardinality ?? maxCardinality), 2 ** 64);
    if (!costOptions.suppressPerExpressionCost && ruleCost > CRD_RULE_ESTIMATED_COST_LIMIT) {
      errs.push(
        fieldError.forbidden(ruleAt.child("rule"), celCostErrorMessage("estimated rule cost", ruleCost, CRD_RULE_ESTIMATED_COST_LIMIT)),
      );
    }
    totalCost.observe(ruleAt.child("rule"), ruleCost);
    if (compiled?.error?.type === "Required") errs.push(fieldError.required(ruleAt.child("rule"), compiled.error.detail));
    else if (compiled?.error) errs.push(fieldError.invalid(ruleAt.child("rule"), rule, compiled.error.detail));
    if (compiled?.messageExpressionError)
      errs.push(fieldError.invalid(ruleAt.child("messageExpression"), rule, compiled.messageExpressionError));
    else if (compiled?.messageExpressionMaxCost !== undefined) {
      // Kubernetes prices a messageExpression once, without the cardinality.
      const messageCost = compiled.messageExpressionMaxCost;
      if (!costOptions.suppressPerExpressionCost && messageCost > CRD_RULE_ESTIMATED_COST_LIMIT) {
        errs.push(
          fieldError.forbidden(
            ruleAt.child("messageExpression"),
            celCostErrorMessage("estimated messageExpression cost", messageCost, CRD_RULE_ESTIMATED_COST_LIMIT),
          ),
        );
      }
      totalCost.observe(ruleAt.child("messageExpression"), messageCost);
    }
    // One else-if chain, as validation.go v1.32 has it: a multi-line rule must say what it checks.
    const message = rule.message ?? "";
    if (rule.rule.trim() === "") {
      // compiling reports the empty rule
    } else if (message !== "" && message.trim() === "") {
      errs.push(fieldError.invalid(ruleAt.child("message"), rule.message, "message must be non-empty if specified"));
    } else if (hasLineBreaks(message.trim())) {
      errs.push(fieldError.invalid(ruleAt.child("message"), rule.message, "message must not contain line breaks"));
    } else if (hasLineBreaks(rule.rule.trim()) && message.trim() === "") {
      errs.push(fieldError.required(ruleAt.child("message"), "message must be specified if rule contains line breaks"));
    }
    if (rule.messageExpression !== undefined && rule.messageExpression !== "" && rule.messageExpression.trim() === "") {
      errs.push(fieldError.required(ruleAt.child("messageExpression"), "messageExpression must be non-empty if specified"));
    }
    if (rule.reason !== undefined && !reasons.includes(rule.reason))
      errs.push(fieldError.notSupported(ruleAt.child("reason"), rule.reason, reasons));
    if (rule.fieldPath) {
      const resolved = validFieldPath(rule.fieldPath, s);
      if ("error" in resolved)
        errs.push(fieldError.invalid(ruleAt.child("fieldPath"), rule.fieldPath, `fieldPath must be a valid path: ${resolved.error}`));
    }
    if (rule.optionalOldSelf && compiled && !compiled.error && !compiled.usesOldSelf) {
      errs.push(fieldError.invalid(ruleAt.child("optionalOldSelf"), true, "may not be set if rule does not use oldSelf"));
    }
  });
  return errs;
}

function walk(
  s: SchemaNode,
  at: FieldPath,
  prefix: string,
  resourceRoot: boolean,
  cardinality: Cardinality,
  totalCost: TotalCost,
  costOptions: RuleCostOptions,
): FieldError[] {
  const errs = nodeRuleErrors(s, at, prefix, resourceRoot, cardinality, totalCost, costOptions);
  const child = times(cardinality, maxElements(s));
  for (const [name, prop] of s.properties) {
    errs.push(...walk(prop, at.child("properties").key(name), prefix, prop.embeddedResource, child, totalCost, costOptions));
  }
  const values = additionalSchema(s);
  if (values) errs.push(...walk(values, at.child("additionalProperties"), prefix, values.embeddedResource, child, totalCost, costOptions));
  if (s.items) errs.push(...walk(s.items, at.child("items"), prefix, s.items.embeddedResource, child, totalCost, costOptions));
  s.allOf.forEach((sub, i) =>
    errs.push(...walk(sub, at.child("allOf").index(i), prefix, resourceRoot, cardinality, totalCost, costOptions)),
  );
  return errs;
}

/**
 * The rule errors of a whole CRD version schema; `at` is where the schema sits (…openAPIV3Schema).
 * Besides each rule's own checks, the estimated costs: per rule (times its cardinality) and in total.
 */
export function validateSchemaRules(
  schema: JSONSchemaProps,
  options: SchemaOptions,
  at: FieldPath,
  costOptions: RuleCostOptions = {},
): FieldError[] {
  const totalCost = new TotalCost();
  const errs = walk(compileNode(schema, options.extensionPrefix), at, options.extensionPrefix, true, 1, totalCost, costOptions);
  if (totalCost.total > CRD_ESTIMATED_COST_LIMIT) {
    for (const { at: ruleAt } of totalCost.mostExpensive) {
      errs.push(fieldError.forbidden(ruleAt, "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema"));
    }
    const what = `${options.extensionPrefix}-validations estimated rule cost total for entire OpenAPIv3 schema`;
    errs.push(fieldError.forbidden(at, celCostErrorMessage(what, totalCost.total, CRD_ESTIMATED_COST_LIMIT)));
  }
  return errs;
}

/** What a `jsonPath` (selectable field, no array notation) names in a schema: its path and type. */
export function resolveSchemaFieldPath(
  schema: JSONSchemaProps,
  options: SchemaOptions,
  jsonPath: string,
): { path: string; type: string; format: string } | { error: string } {
  const resolved = validFieldPath(jsonPath, compileNode(schema, options.extensionPrefix), { allowArrayNotation: false });
  if ("error" in resolved) return resolved;
  const node = resolved.schema;
  return { path: resolved.path.toString(), type: node.intOrString ? "" : node.type, format: node.raw.format ?? "" };
}
