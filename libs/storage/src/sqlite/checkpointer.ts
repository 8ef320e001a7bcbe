// Checkpoints of a SQLite database's write-ahead log, copied into the database on a thread of their
// own. SQLite checkpoints from the connection whose commit takes the log past 1,000 pages: that commit
// copies the whole log (~8 µs a page here) before it returns, and on the apiserver's serving thread the
// requests behind it waited too. A second connection on a worker thread runs SQLite's PASSIVE
// checkpoint, which blocks no reader or writer, every CHECKPOINT_REVISIONS commits it hears of on the
// storage's commit channel (every serving thread announces its commits there). docs/storage.md has the figures.
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import type { Logger } from "@orch/log";

/**
 * Revisions between two of the worker's checkpoints, a few pages each: each checkpoint flushes the disk
 * twice, and what the serving connections find left to copy (SERVING_CHECKPOINT_PAGES) is at most this.
 */
export const CHECKPOINT_REVISIONS = 100;

/**
 * The serving connections still checkpoint when the log reaches this many pages (SQLite's own
 * threshold, raised from 1,000). SQLite starts the log over only once a checkpoint has reached its end
 * while no write is under way, which a concurrent checkpointer rarely sees under steady writes; this
 * one finds all but the last few commits' pages copied already. It also bounds the log should the
 * worker stop.
 */
export const SERVING_CHECKPOINT_PAGES = 4_000;

interface CheckpointerData {
  driver: string;
  path: string;
  channel: string;
  revisions: number;
}

// The worker's whole program, run from a string: the apiserver is one bundle, with no file for it.
const PROGRAM = `
const { workerData, parentPort, BroadcastChannel } = require("node:worker_threads");
const Database = require(workerData.driver);
const db = new Database(workerData.path);
// A compaction's TRUNCATE checkpoint on the serving thread holds the checkpoint lock for a moment.
db.pragma("busy_timeout = 1000");
const checkpoint = () => {
  try {
    db.pragma("wal_checkpoint(PASSIVE)");
  } catch (e) {
    parentPort.postMessage(String((e && e.message) || e));
  }
};
const channel = new BroadcastChannel(workerData.channel);
let checkpointed = -1;
let heard = -1;
let scheduled = false;
channel.onmessage = ({ data: revision }) => {
  heard = Math.max(heard, revision);
  if (checkpointed < 0) checkpointed = revision;
  if (scheduled || heard - checkpointed < workerData.revisions) return;
  scheduled = true;
  // After the commits already queued for this thread, so that one checkpoint covers them all.
  setImmediate(() => {
    scheduled = false;
    checkpointed = heard;
    checkpoint();
  });
};
// What was committed before this thread listened.
checkpoint();
parentPort.once("message", () => {
  channel.close();
  db.close();
  parentPort.close();
});
`;

/** A start waits this long: the thread and its driver would compete with the apiserver's own start. */
const START_DELAY_MS = 1_000;

export class Checkpointer {
  private worker: Worker | undefined;
  private exited: Promise<void> = Promise.resolve();
  private readonly starting: NodeJS.Timeout;

  constructor(path: string, channel: string, log: Logger) {
    this.starting = setTimeout(() => {
      const data: CheckpointerData = {
        driver: createRequire(import.meta.url).resolve("better-sqlite3"),
        path,
        channel,
        revisions: CHECKPOINT_REVISIONS,
      };
      const worker = (this.worker = new Worker(PROGRAM, { eval: true, workerData: data }));
      worker.on("message", (error: string) => log.warn("WAL checkpoint failed", { error }));
      worker.on("error", (e) => log.error("WAL checkpointer stopped; the serving connections checkpoint instead", { error: e.message }));
      this.exited = new Promise((resolve) => worker.once("exit", () => resolve()));
      // It serves the connection that started it, and keeps nothing alive on its own.
      worker.unref();
    }, START_DELAY_MS);
    this.starting.unref();
  }

  /** Closes the checkpointer's connection first, so that the serving one is the file's last. */
  async close(): Promise<void> {
    clearTimeout(this.starting);
    this.worker?.postMessage("close");
    await this.exited;
  }
}
