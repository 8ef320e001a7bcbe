// A subpath of its own (`@orch/storage/postgres`), so that only a process that selects PostgreSQL loads
// the driver; everything else imports `@orch/storage` (the interface and SQLite) as before.
export { PostgresStorage, type PostgresOptions } from "./postgres-storage.js";
