// compileSchema: one CRD version's openAPIV3Schema, read once, serving the four operations of a
// StructuralSchema in the order Kubernetes applies them to a custom resource.
import type { JSONSchemaProps } from "@orch/api";
import { type FieldError, type FieldErrorType, type Shape, fieldError } from "@orch/machinery";
import { hasRules, validateRules } from "./cel.js";
import { applyDefaults } from "./defaults.js";
import { validateEmbeddedResources } from "./embedded.js";
import type { SchemaOptions, StructuralSchema } from "./types.js";
import { validateListSetsAndMaps } from "./list-type.js";
import { validateOpenAPI } from "./openapi.js";
import { pruneNonNullableNulls, pruneUnknownFields } from "./prune.js";
import { shapeOfSchema } from "./shape.js";
import { type SchemaNode, compileNode } from "./structural.js";

/** hasBlockingErr (customresource/strategy.go): type, enum, required, length and size violations. */
const blockingErrorTypes: ReadonlySet<FieldErrorType> = new Set([
  "FieldValueNotSupported",
  "FieldValueRequired",
  "FieldValueTooLong",
  "FieldValueTooMany",
  "FieldValueTypeInvalid",
]);

/**
 * Kubernetes validates a custom resource from a nil field path, so an error about the object itself
 * is reported at `<nil>` (field.Path's String() of nil): `<nil>: Invalid value: "null": some validation…`.
 */
const nilPath = "<nil>";

class CompiledSchema implements StructuralSchema {
  private shapeCache: Shape | undefined;

  private readonly hasRules: boolean;

  constructor(private readonly root: SchemaNode) {
    this.hasRules = hasRules(root);
  }

  prune(value: unknown): string[] {
    const dropped = pruneUnknownFields(value, this.root);
    pruneNonNullableNulls(value, this.root);
    return dropped;
  }

  applyDefaults(value: unknown): void {
    applyDefaults(value, this.root);
  }

  validate(value: unknown, old?: unknown): FieldError[] {
    return this.validateFromRoot(value, old).map((e) => (e.field === "" ? { ...e, field: nilPath } : e));
  }

  private validateFromRoot(value: unknown, old?: unknown): FieldError[] {
    const errs = [
      ...validateOpenAPI(this.root, value),
      ...validateEmbeddedResources(this.root, value),
      ...validateListSetsAndMaps(this.root, value),
    ];
    if (!this.hasRules) return errs;
    // Rules assume a well-typed object: Kubernetes skips them after these schema errors.
    if (errs.some((e) => blockingErrorTypes.has(e.type))) {
      errs.push(
        fieldError.invalid(
          "",
          "null",
          "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
        ),
      );
      return errs;
    }
    return [...errs, ...validateRules(this.root, value, old)];
  }

  get shape(): Shape {
    this.shapeCache ??= shapeOfSchema(this.root, true);
    return this.shapeCache;
  }
}

/** Compiles a CRD version's schema (assumed valid: the CRD's own validation has accepted it). */
export function compileSchema(schema: JSONSchemaProps, options: SchemaOptions): StructuralSchema {
  return new CompiledSchema(compileNode(schema, options.extensionPrefix));
}
