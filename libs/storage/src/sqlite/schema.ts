import { customType, index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

/**
 * An object's value: JSON as TEXT, or, for an encrypted resource, Kubernetes' own bytes
 * (`k8s:enc:aescbc:v1:<key>:…`) as a BLOB. A column of TEXT affinity keeps a BLOB as it is, so both
 * share one column and no migration; the bytes take no base64 (a third more) and stay byte-for-byte
 * what etcd would hold.
 */
const storedValue = customType<{ data: string | Buffer; driverData: string | Buffer }>({ dataType: () => "text" });

/** The current state: one row per live object. */
export const objects = sqliteTable(
  "objects",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    resource: text("resource").notNull(),
    namespace: text("namespace").notNull(),
    name: text("name").notNull(),
    revision: integer("revision").notNull(),
    value: storedValue("value").notNull(),
  },
  (t) => [uniqueIndex("objects_key").on(t.resource, t.namespace, t.name)],
);

/**
 * The revision log, one row per committed write, written in the same transaction as `objects`.
 * It serves watch history, lists at an older revision, and is the outbox the event relay publishes.
 */
export const changes = sqliteTable(
  "changes",
  {
    revision: integer("revision").primaryKey(),
    resource: text("resource").notNull(),
    namespace: text("namespace").notNull(),
    name: text("name").notNull(),
    type: text("type", { enum: ["ADDED", "MODIFIED", "DELETED"] }).notNull(),
    value: storedValue("value").notNull(),
    prevRevision: integer("prev_revision").notNull(),
    prevValue: storedValue("prev_value"),
    committedAt: integer("committed_at").notNull(),
  },
  (t) => [index("changes_key").on(t.resource, t.namespace, t.name, t.revision)],
);

/** Counters: `revision` (last assigned), `compacted` (history removed through), `published` (outbox watermark). */
export const counters = sqliteTable("counters", {
  name: text("name").primaryKey(),
  value: integer("value").notNull(),
});
