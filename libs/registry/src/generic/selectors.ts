// Label and field selectors compiled into predicates over objects of one kind.
import type { ObjectHeader } from "@orch/api";
import {
  SelectorError,
  errors,
  fieldSelectorIsEverything,
  fieldSelectorMatches,
  labelSelectorIsEverything,
  labelSelectorMatches,
  parseFieldSelector,
  parseLabelSelector,
} from "@orch/machinery";
import type { KindDefinition } from "./kind.js";

export type Predicate = (obj: ObjectHeader) => boolean;

function parsing<T>(parse: () => T): T {
  try {
    return parse();
  } catch (e) {
    if (e instanceof SelectorError) throw errors.badRequest(e.message);
    throw e;
  }
}

export function compileLabelSelector(text: string | undefined): Predicate | undefined {
  if (!text) return undefined;
  const selector = parsing(() => parseLabelSelector(text));
  if (labelSelectorIsEverything(selector)) return undefined;
  return (obj) => labelSelectorMatches(selector, obj.metadata.labels ?? {});
}

/**
 * A necessary condition of a label selector on an object's stored JSON text, to skip parsing objects that
 * cannot match: a list by label otherwise parses every object of its scope. Stored values are compact
 * `JSON.stringify` output, so a label `k=v` appears as `"k":"v"`; text that has it may still not match
 * (the same pair elsewhere in the object), and the full selector decides. Undefined when no requirement
 * says what must be present (`!=`, `notin`, `!k` only).
 */
export function labelSelectorTextCheck(text: string | undefined): ((json: string) => boolean) | undefined {
  if (!text) return undefined;
  const selector = parsing(() => parseLabelSelector(text));
  const needles: string[][] = [];
  for (const { key, operator, values } of selector.requirements) {
    const k = JSON.stringify(key);
    if (operator === "=" || operator === "==" || operator === "in") needles.push(values.map((v) => `${k}:${JSON.stringify(v)}`));
    else if (operator === "exists" || operator === "gt" || operator === "lt") needles.push([`${k}:`]);
  }
  if (needles.length === 0) return undefined;
  return (json) => needles.every((anyOf) => anyOf.some((needle) => json.includes(needle)));
}

/** Fields a selector may name: metadata.name, metadata.namespace (namespaced kinds) and the kind's own. */
export function selectableField(kind: KindDefinition, field: string): ((obj: ObjectHeader) => string | undefined) | undefined {
  if (field === "metadata.name") return (o) => o.metadata.name;
  if (field === "metadata.namespace" && kind.namespaced) return (o) => o.metadata.namespace;
  return kind.selectableFields[field];
}

export function compileFieldSelector(kind: KindDefinition, text: string | undefined): Predicate | undefined {
  if (!text) return undefined;
  const selector = parsing(() => parseFieldSelector(text));
  if (fieldSelectorIsEverything(selector)) return undefined;
  const getters = new Map<string, (obj: ObjectHeader) => string | undefined>();
  for (const { field } of selector.requirements) {
    const get = selectableField(kind, field);
    if (!get) {
      const known = Object.keys(kind.selectableFields).length > 0;
      throw errors.badRequest(
        known
          ? `field label not supported: ${field}`
          : `"${field}" is not a known field selector: only "metadata.name", "metadata.namespace"`,
      );
    }
    getters.set(field, get);
  }
  return (obj) => fieldSelectorMatches(selector, (field) => getters.get(field)?.(obj));
}
