// A separate OS process for the multi-process test in sqlite.test.ts: waits for "go" on stdin, then races
// the other workers to create one key and to increment a counter in another with optimistic retries.
import { KeyExistsError, RevisionConflictError, SqliteStorage } from "../../src/index.js";

const [path, id, countText] = process.argv.slice(2);
const storage = new SqliteStorage({ path: path! });
const counter = { resource: "core/configmaps", namespace: "default", name: "counter" };
const contested = { resource: "core/configmaps", namespace: "default", name: "contested" };

process.stdout.write("ready\n");
await new Promise((resolve) => process.stdin.once("data", resolve));

let createdContested = false;
try {
  await storage.create(contested, { metadata: { name: "contested" }, data: { by: id } });
  createdContested = true;
} catch (e) {
  if (!(e instanceof KeyExistsError)) throw e;
}

let conflicts = 0;
const revisions: number[] = [];
for (let done = 0; done < Number(countText); ) {
  const stored = (await storage.get(counter))!;
  const object = JSON.parse(stored.value) as { metadata: { name: string }; data: { n: number } };
  object.data.n += 1;
  try {
    revisions.push((await storage.update(counter, object, stored.revision)).revision);
    done++;
  } catch (e) {
    if (!(e instanceof RevisionConflictError)) throw e;
    conflicts++;
  }
}
await storage.close();
process.stdout.write(`${JSON.stringify({ createdContested, conflicts, revisions })}\n`);
process.stdin.destroy();
