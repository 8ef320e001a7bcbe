import { test } from "vitest";
import { SqliteStorage } from "@orch/storage";
import { mkdtempSync, statSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
test("x", async () => {
  const dir = mkdtempSync(join(tmpdir(), "st-"));
  const path = join(dir, "db.sqlite");
  const s = new SqliteStorage({ path });
  console.log((s as any).sqlite.pragma("auto_vacuum"), (s as any).sqlite.pragma("page_size"));
  const N = 50;
  const revs = new Map<string, number>();
  const pad = "x".repeat(400);
  for (let i = 0; i < N; i++) { const c = await s.create({ resource: "core/pods", namespace: "ns", name: "p" + i }, { metadata: { name: "p" + i }, pad }); revs.set("p" + i, c.revision); }
  const t = Date.now();
  for (let j = 0; j < 20000; j++) {
    const name = "p" + (j % N);
    const c = await s.update({ resource: "core/pods", namespace: "ns", name }, { metadata: { name }, pad, j }, revs.get(name)!);
    revs.set(name, c.revision);
    if (j % 1000 === 999) { await s.markPublished(c.revision); const r = await s.compact({ maxRevisions: 1000, maxAgeMs: 1e9 }); }
  }
  console.log("ms", Date.now() - t, statSync(path).size, statSync(path + "-wal").size);
});
