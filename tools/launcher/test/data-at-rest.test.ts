// What the control plane keeps on disk (database, keys, kubeconfigs, the NATS store with every event)
// is readable by its owner only: the data directory 0700 and the database files 0600, whether the
// launcher creates the directory or finds it created by someone else with looser modes.
import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { startControlPlane } from "./control-plane.js";

const parent = mkdtempSync(join(tmpdir(), "orch-at-rest-"));
afterAll(() => rmSync(parent, { recursive: true, force: true }));

const mode = (path: string) => statSync(path).mode & 0o777;

/** Every file and directory under `dir` that others (group or world) may read, write or enter. */
function openToOthers(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const path = join(entry.parentPath, entry.name);
    if (entry.isSymbolicLink()) continue;
    if (mode(path) & 0o077) found.push(`${path} ${mode(path).toString(8)}`);
  }
  return found;
}

it("creates the data directory 0700, writes nothing others can read, and closes one made open by others", async () => {
  const dataDir = join(parent, "data");
  const oldMask = process.umask(0o022);
  try {
    let cp = await startControlPlane({}, { dataDir });
    expect(mode(dataDir)).toBe(0o700);
    expect(mode(join(dataDir, "orch.db"))).toBe(0o600);
    expect(openToOthers(dataDir)).toEqual([]);
    expect(await cp.stop()).toBe(0);

    // Someone loosened it while it was stopped: the next start closes it again.
    chmodSync(dataDir, 0o755);
    for (const file of ["orch.db", "orch.db-wal", "orch.db-shm"]) {
      try {
        chmodSync(join(dataDir, file), 0o644);
      } catch {
        // not every file exists after a clean stop
      }
    }
    cp = await startControlPlane({}, { dataDir });
    expect(mode(dataDir)).toBe(0o700);
    expect(mode(join(dataDir, "orch.db"))).toBe(0o600);
    expect(openToOthers(join(dataDir))).toEqual([]);
    expect(await cp.stop()).toBe(0);
  } finally {
    process.umask(oldMask);
  }
}, 60_000);
