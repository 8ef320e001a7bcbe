// Which engine holds the cluster's state: ORCH_STORAGE (config.postgresUrl) selects PostgreSQL, otherwise
// the embedded SQLite file in the data directory, as always (docs/storage.md).
import type { Logger } from "@orch/log";
import { type ServingStorage, SqliteStorage, type ValueTransformers } from "@orch/storage";
import { PostgresStorage } from "@orch/storage/postgres";
import { join } from "node:path";
import type { ApiserverConfig } from "./config.js";

/** `leader`: whether this thread runs the cluster's singletons on SQLite (PostgreSQL elects one by lock). */
export async function openStorage(
  config: ApiserverConfig,
  transformers: ValueTransformers,
  log: Logger,
  leader: boolean,
): Promise<ServingStorage> {
  if (!config.postgresUrl) return new SqliteStorage({ path: join(config.dataDir, "orch.db"), transformers, leader });
  const storage = await PostgresStorage.open({ url: config.postgresUrl, transformers, log: log.child("storage") });
  // The URL may carry a password: the log names the server and database only.
  const where = new URL(config.postgresUrl);
  log.info("storage: PostgreSQL", { host: where.host, database: where.pathname.slice(1) });
  return storage;
}
