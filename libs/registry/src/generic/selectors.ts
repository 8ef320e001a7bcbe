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
