// A worker thread for the threads test in sqlite.test.ts, as an apiserver's serving thread opens the
// file: increments a shared counter with optimistic retries while its commit listener records every
// revision it hears, its own and the other threads', then reports both once it has heard `through`.
import { parentPort, workerData } from "node:worker_threads";
import { RevisionConflictError, SqliteStorage } from "../../src/index.js";

const { path, increments, through } = workerData as { path: string; increments: number; through: number };
const storage = new SqliteStorage({ path, leader: false });
const heard: number[] = [];
storage.onCommit((change) => heard.push(change.revision));
const counter = { resource: "core/configmaps", namespace: "default", name: "counter" };

parentPort!.postMessage("ready");
await new Promise((resolve) => parentPort!.once("message", resolve));
let conflicts = 0;
const revisions: number[] = [];
while (revisions.length < increments) {
  const stored = (await storage.get(counter))!;
  const object = JSON.parse(stored.value) as { metadata: { name: string }; data: { n: number } };
  object.data.n += 1;
  try {
    revisions.push((await storage.update(counter, object, stored.revision)).revision);
  } catch (e) {
    if (!(e instanceof RevisionConflictError)) throw e;
    conflicts++;
  }
}
// The other threads' last commits arrive by announcement: wait for them (the test's timeout bounds this).
while (heard.at(-1)! < through) await new Promise((resolve) => setTimeout(resolve, 5));
await storage.close();
parentPort!.postMessage({ revisions, heard, conflicts });
