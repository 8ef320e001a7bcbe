// Which engine holds the cluster's state: ORCH_STORAGE (config.postgresUrl) selects PostgreSQL, otherwise
// the embedded SQLite file in the data directory, as always (docs/storage.md).
import type { Logger } from "@orch/log";
import { type ServingStorage, SqliteStorage, type ValueTransformers } from "@orch/storage";
import { PostgresStorage } from "@orch/storage/postgres";
import { join } from "node:path";
import type { ApiserverConfig } from "./config.js";
import type { ServingThread } from "./serving-thread.js";

/**
 * On SQLite, `thread` says whether this thread runs the cluster's singletons (its first; PostgreSQL elects
 * one by lock), and whether it is the file's only connection (one serving thread).
 */
export async function openStorage(
  config: ApiserverConfig,
  transformers: ValueTransformers,
  log: Logger,
  thread: ServingThread,
): Promise<ServingStorage> {
  if (!config.postgresUrl) {
    const path = join(config.dataDir, "orch.db");
    return new SqliteStorage({ path, transformers, leader: thread.index === 0, onlyConnection: thread.threads === 1, checkpointer: true });
  }
  const storage = await PostgresStorage.open({ url: config.postgresUrl, transformers, log: log.child("storage") });
  // The URL may carry a password: the log names the server and database only.
  const where = new URL(config.postgresUrl);
  log.info("storage: PostgreSQL", { host: where.host, database: where.pathname.slice(1) });
  return storage;
}
