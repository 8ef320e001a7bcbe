#!/usr/bin/env node
// `orch`: the command of the @orch/control-plane package. `orch start` runs the control plane in the
// foreground exactly as `npm start` does in the repository (the launcher beside this file, with the
// same environment contract); `--ephemeral` gives it a throw-away data directory.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));

const USAGE = `usage: orch <command>

  orch start [--ephemeral] [--data-dir <dir>] [--port <port>]
      run NATS, the apiserver and the controllers in the foreground; Ctrl-C stops them all
      --ephemeral   a new data directory, removed when the control plane stops
      --data-dir    where state is kept (default $ORCH_DATA_DIR, else ./.orch)
      --port        the apiserver's HTTPS port (default $ORCH_PORT, else 6443)
  orch version
      the package's version

Settings are environment variables (ORCH_PROFILE, ORCH_CONTROLLERS, ORCH_NATS_URL, ...): see the README.`;

function version(): string {
  return (JSON.parse(readFileSync(join(here, "..", "package.json"), "utf8")) as { version: string }).version;
}

async function start(args: string[]): Promise<void> {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--ephemeral") {
      const dir = mkdtempSync(join(tmpdir(), "orch-"));
      process.env.ORCH_DATA_DIR = dir;
      // The launcher ends the process with process.exit once everything it started has stopped.
      process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
    } else if (arg === "--data-dir" && args[i + 1]) process.env.ORCH_DATA_DIR = args[++i];
    else if (arg === "--port" && args[i + 1]) process.env.ORCH_PORT = args[++i];
    else throw new Error(`orch start: unknown argument ${JSON.stringify(arg)}\n\n${USAGE}`);
  }
  await import(pathToFileURL(join(here, "launcher.mjs")).href);
}

const [command, ...rest] = process.argv.slice(2);
try {
  if (command === "start") await start(rest);
  else if (command === "version" || command === "--version") console.log(version());
  else if (command === undefined || command === "help" || command === "--help") console.log(USAGE);
  else throw new Error(`orch: unknown command ${JSON.stringify(command)}\n\n${USAGE}`);
} catch (e) {
  console.error((e as Error).message);
  process.exit(2);
}
