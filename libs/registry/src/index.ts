export * from "./kind.js";
export * from "./services.js";
export { storageClusterReader } from "./cluster-reader.js";
export * from "./registry.js";
export * from "./store.js";
export * from "./watch.js";
export type { ListOptions } from "./list-options.js";
export { builtinKinds } from "./kinds/index.js";
export { builtinObjects, ensureBuiltinObjects } from "./bootstrap.js";
