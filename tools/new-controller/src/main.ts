// `npm run new-controller -- <name> [--kind Widget] [--group example.com] [--version v1alpha1] [--plural widgets]`
import { spawnSync } from "node:child_process";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { addRunScript, controllerSpec, generateController } from "./index.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    kind: { type: "string" },
    group: { type: "string" },
    version: { type: "string" },
    plural: { type: "string" },
    "no-install": { type: "boolean" },
  },
});

try {
  const name = positionals[0];
  if (!name || positionals.length > 1)
    throw new Error("usage: npm run new-controller -- <name> [--kind K] [--group G] [--version V] [--plural P]");
  const spec = controllerSpec(name, values);
  const dir = join(root, "apps", spec.name);
  const written = generateController(root, dir, spec);
  addRunScript(root, spec, dir);
  console.log(`created ${written.join(", ")}\nadded the script "npm run ${spec.name}" to package.json`);
  // The new workspace must be in package-lock.json, or the next `npm ci` refuses the lock file.
  if (!values["no-install"]) {
    const npm = spawnSync("npm", ["install", "--no-audit", "--no-fund"], { cwd: root, stdio: "inherit" });
    if (npm.status !== 0) throw new Error("npm install failed: run it yourself to add the workspace to package-lock.json");
  }
  console.log(`\nnext: npm start (it runs ${spec.name} too), or npm run ${spec.name} against a running control plane`);
} catch (e) {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
}
