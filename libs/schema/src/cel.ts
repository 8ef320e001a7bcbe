// CEL validation rules (`x-*-validations`) of a structural schema, evaluated as apiextensions-apiserver
// pkg/apiserver/schema/cel/validation.go does: each rule sees its node's value as `self` (and, on
// update, the correlated old value as `oldSelf`), objects and maps correlate by key, lists only when
// they are list-type map (by their keys); transition rules run only when there is an old value
// (unless optionalOldSelf); all rules of one object share one runtime cost budget.
import {
  CEL_MAX_REQUEST_SIZE_BYTES,
  CRD_RULE_PER_CALL_COST_LIMIT,
  CRD_RULES_RUNTIME_COST_BUDGET,
  type CompiledCrdRule,
  type RuleField,
  type RuleType,
  celMaxCardinality,
  compileCrdRules,
  escapeFieldName,
} from "@orch/cel";
import { type FieldError, FieldPath, fieldError, jsonEqual } from "@orch/machinery";
import { validFieldPath } from "./field-path.js";
import { type SchemaNode, additionalSchema, isPlainObject } from "./structural.js";

/** What an unbounded string may hold: a whole request but its quotes (estimateMaxStringLengthPerRequest). */
const unboundedLength = CEL_MAX_REQUEST_SIZE_BYTES - 2;
const stringType: RuleType = { kind: "string", maxElements: unboundedLength, minSerializedSize: 2 };

/** The fields every resource root (and embedded resource) shows to rules: TypeMeta and two of ObjectMeta. */
const typeAndObjectMeta: RuleField[] = [
  { name: "apiVersion", type: stringType },
  { name: "kind", type: stringType },
  {
    name: "metadata",
    type: {
      kind: "object",
      fields: [
        { name: "name", type: stringType },
        { name: "generateName", type: stringType },
      ],
      minSerializedSize: 2,
    },
  },
];

const nonNegative = (n: number | undefined): number | undefined => (n === undefined ? undefined : Math.max(0, n));

/**
 * SchemaDeclType: the CEL type of a schema node, undefined where rules cannot see the value. Sizes are
 * Kubernetes' (apiserver/pkg/cel/common/schemas.go): a declared maxItems/maxProperties/maxLength, or
 * what fits in a request of CEL_MAX_REQUEST_SIZE_BYTES; they drive the cost estimate at CRD create.
 */
export function ruleTypeOf(s: SchemaNode, resourceRoot = false): RuleType | undefined {
  const type = declTypeOf(s, resourceRoot);
  return type && s.nullable ? { ...type, nullable: true } : type;
}

function declTypeOf(s: SchemaNode, resourceRoot: boolean): RuleType | undefined {
  if (s.intOrString) return { kind: "dyn", intOrString: true, maxElements: unboundedLength, minSerializedSize: 1 };
  const resource = resourceRoot || s.embeddedResource;
  switch (s.type) {
    case "array": {
      const item = s.items ? ruleTypeOf(s.items) : undefined;
      if (!item) return undefined;
      const maxElements = nonNegative(s.raw.maxItems) ?? Math.floor(unboundedLength / ((item.minSerializedSize ?? 0) + 1));
      const sized = { maxElements, minSerializedSize: 2 };
      // Set and map lists compare and concatenate by their list type in CEL (values.go).
      if (s.listType === "set") return { kind: "list", item, listKind: { type: "set" }, ...sized };
      if (s.listType === "map") {
        const keys = s.listMapKeys.map((k) => escapeFieldName(k) ?? k);
        return { kind: "list", item, listKind: { type: "map", keys }, ...sized };
      }
      return { kind: "list", item, ...sized };
    }
    case "object": {
      const values = additionalSchema(s);
      if (values) {
        const value = ruleTypeOf(values);
        if (!value) return undefined;
        const maxElements = nonNegative(s.raw.maxProperties) ?? Math.floor(unboundedLength / ((value.minSerializedSize ?? 0) + 6));
        return { kind: "map", value, maxElements, minSerializedSize: 2 };
      }
      const fields: RuleField[] = [];
      const required = new Set(s.raw.required ?? []);
      let minSerializedSize = 2;
      for (const [name, prop] of s.properties) {
        if (resource && (name === "apiVersion" || name === "kind" || name === "metadata")) continue;
        const type = ruleTypeOf(prop);
        if (!type) continue;
        if (escapeFieldName(name)) fields.push({ name, type });
        // A required field without a default is in every serialization: "name":value, plus a comma.
        if (required.has(name) && !prop.hasDefault) minSerializedSize += name.length + (type.minSerializedSize ?? 0) + 4;
      }
      if (resource) fields.push(...typeAndObjectMeta);
      // Unknown fields are not selectable (Kubernetes: "undefined field"), but take part in equality.
      return s.preserveUnknownFields
        ? { kind: "object", fields, preservesUnknownFields: true, minSerializedSize }
        : { kind: "object", fields, minSerializedSize };
    }
    case "string": {
      const maxLength = nonNegative(s.raw.maxLength);
      switch (s.raw.format) {
        case "byte":
          return { kind: "bytes", maxElements: maxLength ?? unboundedLength, minSerializedSize: 2 };
        case "duration":
          return { kind: "duration", maxElements: 32, minSerializedSize: 3 };
        case "date":
          return { kind: "timestamp", maxElements: 12, minSerializedSize: 12 };
        case "date-time":
          return { kind: "timestamp", maxElements: 32, minSerializedSize: 21 };
        default: {
          // maxLength counts characters, the estimate bytes: up to four per character in UTF-8.
          const enumLength = s.raw.enum?.length
            ? Math.max(0, ...s.raw.enum.map((v) => (typeof v === "string" ? Buffer.byteLength(v) : 0)))
            : undefined;
          const maxElements = maxLength !== undefined ? maxLength * 4 : (enumLength ?? unboundedLength);
          return { kind: "string", maxElements, minSerializedSize: 2 };
        }
      }
    }
    case "boolean":
      return { kind: "bool", minSerializedSize: 4 };
    case "number":
      return { kind: "double", minSerializedSize: 1 };
    case "integer":
      return { kind: "int", minSerializedSize: 1 };
    default:
      return undefined;
  }
}

/** The compiled rules of one node with their field paths, or the reason they cannot run. */
interface NodeRules {
  rules: readonly CompiledCrdRule[];
  /** How often the rules can run in one object under an unbounded list or map (celMaxCardinality). */
  maxCardinality: number;
  /** `fieldPath` of each rule, resolved (undefined: report at the node). */
  fieldPaths: readonly (string | undefined)[];
  initError?: string;
}

const compiledRules = new WeakMap<SchemaNode, NodeRules>();

/** Compiles the rules of a node once (a resource root sees apiVersion, kind and metadata). */
export function rulesOf(s: SchemaNode, resourceRoot = false): NodeRules {
  let known = compiledRules.get(s);
  if (known) return known;
  const type = ruleTypeOf(s, resourceRoot);
  if (!type) {
    known = {
      rules: [],
      maxCardinality: 0,
      fieldPaths: [],
      initError: `rule declared on schema that does not support validation rules type: '${s.type}' x-kubernetes-preserve-unknown-fields: '${s.preserveUnknownFields}'`,
    };
  } else {
    known = {
      rules: compileCrdRules(type, s.validations),
      maxCardinality: celMaxCardinality(type.minSerializedSize ?? 0),
      fieldPaths: s.validations.map((rule) => {
        if (!rule.fieldPath) return undefined;
        const resolved = validFieldPath(rule.fieldPath, s);
        return "path" in resolved ? resolved.path.toString() : undefined;
      }),
    };
  }
  compiledRules.set(s, known);
  return known;
}

const ruleErrorString = (rule: { rule: string; message?: string | undefined }) => (rule.message ? rule.message.trim() : rule.rule.trim());
const ruleMessageOrDefault = (rule: { rule: string; message?: string | undefined }) =>
  rule.message ? rule.message.trim() : `failed rule: ${ruleErrorString(rule)}`;

function fieldErrorForReason(at: FieldPath, value: unknown, detail: string, reason: string | undefined): FieldError {
  switch (reason) {
    case "FieldValueForbidden":
      return fieldError.forbidden(at, detail);
    case "FieldValueRequired":
      return fieldError.required(at, detail);
    case "FieldValueDuplicate":
      return fieldError.duplicate(at, value);
    default:
      return fieldError.invalid(at, value, detail);
  }
}

/** Evaluation stops for good once the budget is spent; `remaining < 0` records that. */
class RuleRun {
  remaining = CRD_RULES_RUNTIME_COST_BUDGET;
  readonly errors: FieldError[] = [];

  get exhausted(): boolean {
    return this.remaining < 0;
  }

  node(path: FieldPath, s: SchemaNode, value: unknown, old: unknown, resourceRoot = false): void {
    if (value === null || value === undefined || this.exhausted) return;
    if (s.validations.length > 0) this.expressions(path, s, value, old, resourceRoot);
    if (this.exhausted) return;
    for (const sub of s.allOf) {
      this.node(path, sub, value, old);
      if (this.exhausted) return;
    }
    if (Array.isArray(value)) this.array(path, s, value, Array.isArray(old) ? old : undefined);
    else if (isPlainObject(value)) this.object(path, s, value, isPlainObject(old) ? old : undefined);
  }

  private object(path: FieldPath, s: SchemaNode, value: Record<string, unknown>, old: Record<string, unknown> | undefined): void {
    const values = additionalSchema(s);
    if (values) {
      for (const [k, v] of Object.entries(value)) {
        this.node(path.key(k), values, v, old?.[k], values.embeddedResource);
        if (this.exhausted) return;
      }
    }
    for (const [k, v] of Object.entries(value)) {
      const prop = s.properties.get(k);
      if (!prop) continue;
      this.node(path.child(k), prop, v, old?.[k], prop.embeddedResource);
      if (this.exhausted) return;
    }
  }

  private array(path: FieldPath, s: SchemaNode, value: unknown[], old: unknown[] | undefined): void {
    const items = s.items;
    if (!items) return;
    // Only list-type map items correlate with old items (by their keys).
    const keyOf = (x: unknown) => (isPlainObject(x) ? s.listMapKeys.map((k) => x[k] ?? null) : undefined);
    const oldItem = (x: unknown): unknown => {
      if (s.listType !== "map" || !old) return undefined;
      const key = keyOf(x);
      return key ? old.find((o) => jsonEqual(keyOf(o), key)) : undefined;
    };
    value.forEach((item, i) => {
      if (!this.exhausted) this.node(path.index(i), items, item, oldItem(item), items.embeddedResource);
    });
  }

  private expressions(path: FieldPath, s: SchemaNode, value: unknown, old: unknown, resourceRoot: boolean): void {
    const { rules, fieldPaths, initError } = rulesOf(s, resourceRoot);
    if (initError) {
      this.errors.push(fieldError.invalid(path, s.type, `rule compiler initialization error: ${initError}`));
      return;
    }
    if (this.remaining <= 0) {
      this.errors.push(
        fieldError.invalid(path, s.type, "validation failed due to running out of cost budget, no further validation rules will be run"),
      );
      this.remaining = -1;
      return;
    }
    const oldValue = old === null ? undefined : old;
    rules.forEach((compiled, i) => {
      if (this.exhausted) return;
      const rule = s.validations[i]!;
      if (compiled.error) {
        this.errors.push(fieldError.invalid(path, s.type, `rule compile error: ${compiled.error.detail}`));
        return;
      }
      if (compiled.usesOldSelf && oldValue === undefined && !rule.optionalOldSelf) return;
      const result = compiled.evaluate(value, oldValue, CRD_RULE_PER_CALL_COST_LIMIT);
      if (result.cost > this.remaining) {
        this.errors.push(
          fieldError.invalid(path, s.type, "validation failed due to running out of cost budget, no further validation rules will be run"),
        );
        this.remaining = -1;
        return;
      }
      this.remaining -= result.cost;
      if (!result.ok) {
        if (result.reason === "overload") {
          this.errors.push(
            fieldError.invalid(
              path,
              s.type,
              `'${result.message}': call arguments did not match a supported operator, function or macro signature for rule: ${ruleErrorString(rule)}`,
            ),
          );
        } else if (result.reason === "cost") {
          this.errors.push(
            fieldError.invalid(
              path,
              s.type,
              `'${result.message}': no further validation rules will be run due to call cost exceeds limit for rule: ${ruleErrorString(rule)}`,
            ),
          );
          this.remaining = -1;
        } else {
          this.errors.push(fieldError.invalid(path, s.type, `${result.message} evaluating rule: ${ruleErrorString(rule)}`));
        }
        return;
      }
      if (result.value === true) return;
      const fieldPath = fieldPaths[i];
      const at = fieldPath ? path.child(fieldPath) : path;
      let detail = ruleMessageOrDefault(rule);
      if (compiled.hasMessageExpression) {
        const message = compiled.evaluateMessage(value, oldValue, CRD_RULE_PER_CALL_COST_LIMIT);
        if (message.cost > this.remaining) {
          this.errors.push(
            fieldError.invalid(
              at,
              s.type,
              "messageExpression evaluation failed due to running out of cost budget, no further validation rules will be run",
            ),
          );
          this.remaining = -1;
          return;
        }
        this.remaining -= message.cost;
        if (message.ok && typeof message.value === "string") {
          const text = message.value.trim();
          // An empty or multi-line message falls back to the rule's message, as Kubernetes does.
          if (text !== "" && !text.includes("\n") && text.length <= 5 * 1024) detail = text;
        } else if (!message.ok && message.reason === "cost") {
          this.errors.push(fieldError.invalid(at, s.type, `messageExpression evaluation failed due to: ${message.message}`));
          this.remaining = -1;
          return;
        }
      }
      // Kubernetes 1.32 reports the schema's type as the bad value (`Invalid value: "object": …`).
      this.errors.push(fieldErrorForReason(at, s.type, detail, rule.reason));
    });
  }
}

/** Runs every validation rule of the schema against `value` (and `old` on update). */
export function validateRules(schema: SchemaNode, value: unknown, old: unknown, at = FieldPath.root(), resourceRoot = true): FieldError[] {
  return validateRulesCosted(schema, value, old, at, resourceRoot).errors;
}

/** validateRules, with the runtime cost the rules took from the object's budget (Kubernetes' remainingBudget). */
export function validateRulesCosted(
  schema: SchemaNode,
  value: unknown,
  old: unknown,
  at = FieldPath.root(),
  resourceRoot = true,
): { errors: FieldError[]; cost: number } {
  const run = new RuleRun();
  run.node(at, schema, value, old, resourceRoot);
  return { errors: run.errors, cost: CRD_RULES_RUNTIME_COST_BUDGET - run.remaining };
}

/** Whether a node or any node below it carries rules (to skip the walk for schemas without any). */
export function hasRules(s: SchemaNode | undefined): boolean {
  if (!s) return false;
  if (s.validations.length > 0) return true;
  if (hasRules(s.items) || hasRules(additionalSchema(s))) return true;
  for (const prop of s.properties.values()) if (hasRules(prop)) return true;
  return s.allOf.some(hasRules);
}
