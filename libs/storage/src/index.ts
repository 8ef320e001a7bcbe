export * from "./storage.js";
export { SqliteStorage, type SqliteOptions } from "./sqlite/sqlite-storage.js";
export { StorageInformer, type StorageEventHandlers, type StorageInformerOptions } from "./informer.js";
