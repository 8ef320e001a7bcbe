import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";

/** A temp directory removed after the test file; `file` writes into it and returns the path. */
export function scratchDir(): { dir: string; file: (name: string, content: string) => string; read: (name: string) => string } {
  const dir = mkdtempSync(join(tmpdir(), "orch-pki-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return {
    dir,
    file: (name, content) => {
      const path = join(dir, name);
      writeFileSync(path, content);
      return path;
    },
    read: (name) => readFileSync(join(dir, name), "utf8"),
  };
}

/** Runs /usr/bin/openssl; returns stdout followed by stderr (where "verify OK" goes), throws on a non-zero exit. */
export function openssl(args: string[]): string {
  const r = spawnSync("/usr/bin/openssl", args, { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`openssl ${args.join(" ")} failed (${r.status ?? r.signal}):\n${r.stdout}${r.stderr}`);
  return r.stdout + r.stderr;
}
