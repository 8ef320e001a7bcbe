export * from "./storage.js";
export { SqliteStorage, type SqliteOptions } from "./sqlite/sqlite-storage.js";
