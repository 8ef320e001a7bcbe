import { bigint, check, customType, index, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { sql } from "drizzle-orm";

/**
 * Keys compare byte by byte, as etcd's and SQLite's do ("default/B" before "default/a"): the "C"
 * collation on the column, whatever the database's locale, so list order and pagination match SQLite's.
 */
const keyText = customType<{ data: string; driverData: string }>({ dataType: () => 'text COLLATE "C"' });

/**
 * An object's value is JSON text, or, for an encrypted resource, Kubernetes' own bytes
 * (`k8s:enc:aescbc:v1:<key>:…`). SQLite keeps both in one column; PostgreSQL's text cannot hold bytes,
 * so a value lives in `value` (text) or `value_bytes` (bytea), exactly one of them, and reads back as
 * the same type it was written as (the identity transformer refuses bytes).
 */
const valueColumns = (prefix: "value" | "prev_value") => ({
  text: text(prefix),
  bytes: customType<{ data: Buffer; driverData: Buffer }>({ dataType: () => "bytea" })(`${prefix}_bytes`),
});

const revision = (name: string) => bigint(name, { mode: "number" });

/** The current state: one row per live object. */
export const objects = pgTable(
  "objects",
  {
    resource: keyText("resource").notNull(),
    namespace: keyText("namespace").notNull(),
    name: keyText("name").notNull(),
    revision: revision("revision").notNull(),
    value: valueColumns("value").text,
    valueBytes: valueColumns("value").bytes,
  },
  (t) => [
    primaryKey({ name: "objects_key", columns: [t.resource, t.namespace, t.name] }),
    check("objects_one_value", sql`num_nonnulls(value, value_bytes) = 1`),
  ],
);

/**
 * The revision log, one row per committed write, written in the same transaction as `objects`.
 * It serves watch history, lists at an older revision, and is the outbox the event relay publishes.
 */
export const changes = pgTable(
  "changes",
  {
    revision: revision("revision").primaryKey(),
    resource: keyText("resource").notNull(),
    namespace: keyText("namespace").notNull(),
    name: keyText("name").notNull(),
    type: text("type", { enum: ["ADDED", "MODIFIED", "DELETED"] }).notNull(),
    value: valueColumns("value").text,
    valueBytes: valueColumns("value").bytes,
    prevRevision: revision("prev_revision").notNull(),
    prevValue: valueColumns("prev_value").text,
    prevValueBytes: valueColumns("prev_value").bytes,
    /** Milliseconds since the epoch, as SQLite's: compaction by age compares it with the process clock. */
    committedAt: bigint("committed_at", { mode: "number" }).notNull(),
  },
  (t) => [
    index("changes_key").on(t.resource, t.namespace, t.name, t.revision),
    // `changes(after, limit, resource)`: what a watch of one resource reads to catch up.
    index("changes_resource").on(t.resource, t.revision),
    check("changes_one_value", sql`num_nonnulls(value, value_bytes) = 1`),
  ],
);

/**
 * Counters: `revision` (last assigned; its row lock serializes writers, so commit order is revision
 * order), `compacted` (history removed through), `published` (outbox watermark), `epoch`.
 */
export const counters = pgTable("counters", {
  name: text("name").primaryKey(),
  value: bigint("value", { mode: "number" }).notNull(),
});
