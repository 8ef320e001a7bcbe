// ObjectMeta rules common to every kind, run before the kind's own validation.
import type { ObjectHeader } from "@orch/api";
import { type FieldError, nameIsDNSSubdomain, validateObjectMeta, validateObjectMetaUpdate } from "@orch/machinery";
import type { KindDefinition } from "./kind.js";

const options = (kind: KindDefinition, obj: ObjectHeader) => ({
  namespaced: kind.namespaced,
  nameValidator: (name: string, prefix: boolean) =>
    kind.strategy.validateName ? kind.strategy.validateName(name, prefix, obj) : nameIsDNSSubdomain(name, prefix),
  // Built-in kinds also require unprefixed finalizers to be standard ones.
  kubeFinalizers: !kind.genericMetaValidation,
});

export function validateMetaForCreate(kind: KindDefinition, obj: ObjectHeader): FieldError[] {
  return validateObjectMeta(obj.metadata, options(kind, obj));
}

export function validateMetaForUpdate(kind: KindDefinition, obj: ObjectHeader, old: ObjectHeader): FieldError[] {
  return [...validateObjectMeta(obj.metadata, options(kind, obj)), ...validateObjectMetaUpdate(obj.metadata, old.metadata)];
}
