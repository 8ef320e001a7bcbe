// Measures what encryption at rest costs the storage engine: creates/s, gets/s and a full list, for a
// resource that is not encrypted and for Secrets, with and without the default configuration. Run:
//   npx esbuild libs/encryption-at-rest/test/storage-cost.measure.ts --bundle --platform=node --format=esm --conditions=@orch/source \
//     --external:{better-sqlite3,drizzle-orm,pino,valibot,yaml} --outfile=node_modules/.cache/storage-cost.mjs && node node_modules/.cache/storage-cost.mjs 10000
import { ensureDefaultEncryptionConfiguration, loadEncryptionConfiguration } from "@orch/encryption-at-rest";
import { SqliteStorage, type ValueTransformers } from "@orch/storage";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const N = Number(process.argv[2] ?? 5000);
const payload = "x".repeat(1500);
async function run(label: string, resource: string, transformers: ValueTransformers | undefined) {
  const dir = mkdtempSync(join(tmpdir(), "enc-bench-"));
  const s = new SqliteStorage({ path: join(dir, "orch.db"), ...(transformers ? { transformers } : {}) });
  const key = (i: number) => ({ resource, namespace: "default", name: `o-${i}` });
  let t = performance.now();
  // 16 concurrent writers, as the bench's load does: group commits.
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < N) {
        const i = next++;
        await s.create(key(i), { apiVersion: "v1", kind: "Secret", metadata: { name: `o-${i}` }, data: { p: payload } });
      }
    }),
  );
  const creates = N / ((performance.now() - t) / 1000);
  t = performance.now();
  for (let i = 0; i < N; i++) await s.get(key(i));
  const gets = N / ((performance.now() - t) / 1000);
  t = performance.now();
  for (let r = 0; r < 5; r++) await s.list({ resource });
  const listMs = (performance.now() - t) / 5;
  await s.close();
  rmSync(dir, { recursive: true, force: true });
  return { label, creates: Math.round(creates), gets: Math.round(gets), listMs: Math.round(listMs) };
}
const dir = mkdtempSync(join(tmpdir(), "enc-cfg-"));
const enc = await loadEncryptionConfiguration(await ensureDefaultEncryptionConfiguration(dir));
const rows = [];
for (let round = 0; round < 5; round++) {
  rows.push(await run("pods, no encryption configured", "core/pods", undefined));
  rows.push(await run("pods, secrets encrypted", "core/pods", enc));
  rows.push(await run("secrets, plain", "core/secrets", undefined));
  rows.push(await run("secrets, aescbc", "core/secrets", enc));
}
const by = new Map<string, typeof rows>();
for (const r of rows) by.set(r.label, [...(by.get(r.label) ?? []), r]);
const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const [label, rs] of by)
  console.log(
    `${label.padEnd(32)} creates/s ${median(rs.map((r) => r.creates))}  gets/s ${median(rs.map((r) => r.gets))}  list ${N} ms ${median(rs.map((r) => r.listMs))}`,
  );
rmSync(dir, { recursive: true, force: true });
