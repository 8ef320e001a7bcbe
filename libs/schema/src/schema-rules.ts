// The checks a CRD's own validation makes on the x-*-validations rules of a schema
// (apiextensions-apiserver pkg/apis/apiextensions/validation/validation.go): each rule compiles
// against its node's type and is boolean, a messageExpression compiles to a string, a fieldPath names
// a field of the node, a reason is one of the four, optionalOldSelf only on transition rules.
import type { JSONSchemaProps } from "@orch/api";
import { type FieldError, type FieldPath, fieldError } from "@orch/machinery";
import { rulesOf } from "./cel.js";
import { validFieldPath } from "./field-path.js";
import type { SchemaOptions } from "./types.js";
import { type SchemaNode, additionalSchema, compileNode } from "./structural.js";

/** The newline characters of CEL's grammar (validation.go's newlineMatcher). */
const hasLineBreaks = (text: string) => /[\n\r]/.test(text);

const reasons = ["FieldValueInvalid", "FieldValueForbidden", "FieldValueRequired", "FieldValueDuplicate"];

function nodeRuleErrors(s: SchemaNode, at: FieldPath, prefix: string, resourceRoot: boolean): FieldError[] {
  if (s.validations.length === 0) return [];
  const errs: FieldError[] = [];
  const list = at.child(`${prefix}-validations`);
  const { rules, initError } = rulesOf(s, resourceRoot);
  if (initError) return [fieldError.invalid(list, s.validations, initError)];
  s.validations.forEach((rule, i) => {
    const compiled = rules[i];
    const ruleAt = list.index(i);
    if (compiled?.error?.type === "Required") errs.push(fieldError.required(ruleAt.child("rule"), compiled.error.detail));
    else if (compiled?.error) errs.push(fieldError.invalid(ruleAt.child("rule"), rule, compiled.error.detail));
    if (compiled?.messageExpressionError)
      errs.push(fieldError.invalid(ruleAt.child("messageExpression"), rule, compiled.messageExpressionError));
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

function walk(s: SchemaNode, at: FieldPath, prefix: string, resourceRoot: boolean): FieldError[] {
  const errs = nodeRuleErrors(s, at, prefix, resourceRoot);
  for (const [name, prop] of s.properties) errs.push(...walk(prop, at.child("properties").key(name), prefix, prop.embeddedResource));
  const values = additionalSchema(s);
  if (values) errs.push(...walk(values, at.child("additionalProperties"), prefix, values.embeddedResource));
  if (s.items) errs.push(...walk(s.items, at.child("items"), prefix, s.items.embeddedResource));
  s.allOf.forEach((sub, i) => errs.push(...walk(sub, at.child("allOf").index(i), prefix, resourceRoot)));
  return errs;
}

/** The rule errors of a whole CRD version schema; `at` is where the schema sits (…openAPIV3Schema). */
export function validateSchemaRules(schema: JSONSchemaProps, options: SchemaOptions, at: FieldPath): FieldError[] {
  return walk(compileNode(schema, options.extensionPrefix), at, options.extensionPrefix, true);
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
