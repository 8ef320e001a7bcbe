// Writes a new controller app: `apps/<name>` with its main, reconciler, test and README, and an
// `npm run <name>` script. The launcher then starts it with the rest of the control plane.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { type ControllerSpec, mainTs, packageJson, readme, reconcilerTs, testTs } from "./templates.js";

export type { ControllerSpec } from "./templates.js";

const NAME = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

/** `widget-controller` → `Widget`. */
export function kindFromName(name: string): string {
  const base = name.replace(/-controller$/, "");
  return base
    .split("-")
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join("");
}

/** Fills the defaults and checks the names the files are built from. */
export function controllerSpec(name: string, options: Partial<Omit<ControllerSpec, "name">> = {}): ControllerSpec {
  if (!NAME.test(name))
    throw new Error(`the name must be lower-case letters, digits and dashes (a DNS label), not ${JSON.stringify(name)}`);
  const kind = options.kind ?? kindFromName(name);
  if (!/^[A-Z][A-Za-z0-9]*$/.test(kind)) throw new Error(`the kind must be a CamelCase identifier, not ${JSON.stringify(kind)}`);
  const group = options.group ?? "example.com";
  if (!group.includes(".")) throw new Error(`the group must contain a dot (a domain you own), not ${JSON.stringify(group)}`);
  return { name, kind, group, version: options.version ?? "v1alpha1", plural: options.plural ?? `${kind.toLowerCase()}s` };
}

/** Writes the app into `dir` (refusing to overwrite) and returns the paths written, relative to `root`. */
export function generateController(root: string, dir: string, spec: ControllerSpec): string[] {
  if (existsSync(dir)) throw new Error(`${relative(root, dir) || dir} already exists`);
  const files: [string, string][] = [
    ["package.json", packageJson(spec)],
    ["README.md", readme(spec)],
    [join("src", "main.ts"), mainTs(spec)],
    [join("src", "reconciler.ts"), reconcilerTs(spec)],
    [join("test", `${spec.name}.test.ts`), testTs(spec)],
  ];
  for (const [path, text] of files) {
    mkdirSync(join(dir, path, ".."), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return files.map(([path]) => relative(root, join(dir, path)));
}

/** Adds `npm run <name>` to the root package.json. */
export function addRunScript(root: string, spec: ControllerSpec, dir: string): void {
  const path = join(root, "package.json");
  const pkg = JSON.parse(readFileSync(path, "utf8")) as { scripts: Record<string, string> };
  pkg.scripts[spec.name] = `npm run build --silent && node ${relative(root, join(dir, "dist", "main.mjs"))}`;
  writeFileSync(path, `${JSON.stringify(pkg, null, 2)}\n`);
}
