// @orch/schema: structural schemas of custom resources (a CRD version's openAPIV3Schema), compiled
// once and then used by the apiserver to prune, default and validate custom objects, and by the merge
// code through `shape`. The contract the CRD serving code relies on; see README.md for the rules.
export type { ExtensionPrefix, SchemaOptions, StructuralSchema } from "./types.js";
export { compileSchema } from "./compile.js";
export { resolveSchemaFieldPath, validateSchemaRules } from "./schema-rules.js";
export { compilePattern } from "./openapi.js";
export { type DefaultsOptions, schemaHasDefaults, schemaHasUnprunedDefaults, validateSchemaDefaults } from "./schema-defaults.js";
