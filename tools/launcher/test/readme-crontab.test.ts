// The README's custom-resource lines ("Using it with kubectl"), run as written — from the repository's
// root, with the files they name — against a control plane started as the README says.
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type ControlPlane, startControlPlane } from "./control-plane.js";

const root = resolve(import.meta.dirname, "..", "..", "..");
let cp: ControlPlane;

beforeAll(async () => {
  cp = await startControlPlane();
}, 30_000);
afterAll(() => cp?.stop());

/** The README's kubectl lines about CronTabs, without their comments, split into arguments. */
const lines = readFileSync(join(root, "README.md"), "utf8")
  .split("\n")
  .filter((line) => line.startsWith("kubectl ") && /crontab/i.test(line))
  .map((line) => line.replace(/\s+#.*$/, "").trim());

const run = (line: string) =>
  new Promise<{ code: number; out: string }>((res) => {
    const args = line.split(/\s+/).slice(1);
    execFile("kubectl", ["--kubeconfig", cp.kubeconfig, ...args], { cwd: root, timeout: 30_000 }, (err, stdout, stderr) =>
      res({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: `${stdout}${stderr}` }),
    );
  });

it("runs every CronTab line of the README as written", async () => {
  expect(lines.length).toBeGreaterThanOrEqual(6);
  for (const line of lines) {
    const { code, out } = await run(line);
    if (line.includes("--validate=strict")) {
      // The typo file exists to be refused.
      expect(code, `${line}\n${out}`).not.toBe(0);
      expect(out).toMatch(/unknown field "spec.imagee"/);
    } else {
      expect(code, `${line}\n${out}`).toBe(0);
    }
  }
  const table = await run("kubectl get crontabs");
  expect(table.out).toMatch(/my-new-cron-object\s+\* \* \* \* \*\/5/);
});
