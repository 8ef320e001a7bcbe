// The README's "Using it with kubectl" examples, run as written — each line through bash, in a
// directory that has the repository's examples, against a control plane started as the README says.
// Only what a line cannot do unattended is adapted: a watch is stopped after a moment, `kubectl
// edit` gets an editor that saves nothing, and a write that lost a race with a controller is run again.
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type ControlPlane, startControlPlane } from "./control-plane.js";

const root = resolve(import.meta.dirname, "..", "..", "..");
let cp: ControlPlane;
let cwd: string;

beforeAll(async () => {
  cp = await startControlPlane();
  cwd = await mkdtemp(join(tmpdir(), "orch-readme-"));
  await symlink(join(root, "examples"), join(cwd, "examples"));
}, 30_000);
afterAll(async () => {
  await cp?.stop();
  if (cwd) await rm(cwd, { recursive: true, force: true });
});

/** The section's shell blocks, as commands: a heredoc with its body is one command, every other line one. */
function readmeCommands(): string[] {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  const section = readme.slice(
    readme.indexOf("## Using it with kubectl"),
    readme.indexOf("\n## ", readme.indexOf("## Using it with kubectl") + 1),
  );
  const commands: string[] = [];
  for (const [, block] of section.matchAll(/```sh\n([\s\S]*?)```/g)) {
    const lines = block!.split("\n").filter((l) => l.trim() !== "");
    for (let i = 0; i < lines.length; i++) {
      const heredoc = /<<'(\w+)'/.exec(lines[i]!);
      if (!heredoc) {
        commands.push(lines[i]!);
        continue;
      }
      const end = lines.indexOf(heredoc[1]!, i);
      commands.push(lines.slice(i, end + 1).join("\n"));
      i = end;
    }
  }
  return commands;
}

const run = (command: string, timeout = 30_000) =>
  new Promise<{ code: number | string; out: string }>((res) => {
    execFile(
      "bash",
      ["-c", command],
      { cwd, timeout, env: { ...process.env, KUBECONFIG: cp.kubeconfig, EDITOR: "true" } },
      (err, stdout, stderr) =>
        res({ code: err ? ((err as { code?: number }).code ?? (err as { signal?: string }).signal ?? 1) : 0, out: `${stdout}${stderr}` }),
    );
  });

it("runs every kubectl example of the README's 'Using it with kubectl' as written", async () => {
  const commands = readmeCommands();
  expect(commands.length).toBeGreaterThanOrEqual(30);
  for (const command of commands) {
    if (command.includes(" -w ") || command.endsWith(" -w")) {
      // A watch runs until stopped: it prints the current table first.
      const { out } = await run(command, 2_000);
      expect(out, command).toMatch(/^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\nweb\s/);
      continue;
    }
    let { code, out } = await run(command);
    // `kubectl replace` sends the resourceVersion it just read: a controller's status write in between
    // makes it a Conflict (in Kubernetes too), and a user runs it again.
    for (let retry = 0; retry < 5 && code !== 0 && out.includes("the object has been modified"); retry++)
      ({ code, out } = await run(command));
    const context = `${command}\n${out}`;
    if (command.includes("--validate=strict")) {
      // The typo file exists to be refused.
      expect(code, context).not.toBe(0);
      expect(out).toMatch(/unknown field "spec.imagee"/);
    } else if (command.startsWith("kubectl diff")) {
      // diff exits 1 when there are differences, above 1 on errors.
      expect([0, 1], context).toContain(code);
    } else if (command.startsWith("kubectl auth can-i")) {
      // jane may not: "no" with exit code 1, as kubectl answers.
      expect(out.trim(), context).toBe("no");
    } else {
      expect(code, context).toBe(0);
    }
  }
  // What the lines left behind: the CronTab, the builder account, and web rolled back to its first template.
  expect((await run("kubectl get crontabs")).out).toMatch(/my-new-cron-object\s+\* \* \* \* \*\/5/);
  expect((await run("kubectl get serviceaccount builder -o name")).out.trim()).toBe("serviceaccount/builder");
  expect((await run("kubectl get deployment web -o jsonpath='{.spec.template.spec.containers[0].image}'")).out).toBe("nginx:1.27");
}, 180_000);
