// The contract of a compiled structural schema, and what compiling one takes.
import type { FieldError, Shape } from "@orch/machinery";

export type ExtensionPrefix = "x-orch" | "x-kubernetes";

export interface SchemaOptions {
  /** The naming profile's extension prefix: `x-orch-list-type` or `x-kubernetes-list-type`. */
  extensionPrefix: ExtensionPrefix;
}

/** A compiled structural schema for one CRD version (the whole object, `apiVersion` … `status`). */
export interface StructuralSchema {
  /**
   * Drops, in place, fields the schema does not know (except under preserve-unknown-fields and in
   * `metadata`, which the generic metadata code owns), and `null` where the schema is not nullable.
   * Returns the dropped fields' paths (`spec.foo`), for fieldValidation Strict/Warn.
   */
  prune(value: unknown): string[];
  /** Applies the schema's `default`s in place (after pruning, as Kubernetes does). */
  applyDefaults(value: unknown): void;
  /**
   * Validates a decoded, pruned, defaulted object: types, formats, enums, bounds, patterns, required,
   * list-type uniqueness, embedded resources and the CEL rules; `old` is given on update (transition
   * rules). Field paths and messages as Kubernetes writes them.
   */
  validate(value: unknown, old?: unknown): FieldError[];
  /** List/map semantics for strategic merge and server-side apply. */
  readonly shape: Shape;
}
