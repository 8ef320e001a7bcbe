// The package layout is the architecture: libs never import apps or tools, every cross-package import
// is declared (so Nx's project graph is true), and neither packages nor the files of one package import
// each other in a cycle (type-only imports included: a cycle of types is a tangle too).
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "..", "..", "..");

interface Pkg {
  name: string;
  dir: string;
  area: "apps" | "libs" | "tools";
  declared: Set<string>;
  imported: Set<string>;
}

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    if (statSync(p).isDirectory()) return f === "node_modules" || f === "dist" ? [] : sources(p);
    return p.endsWith(".ts") ? [p] : [];
  });
}

const packages: Pkg[] = (["apps", "libs", "tools"] as const).flatMap((area) =>
  readdirSync(join(root, area))
    .filter((d) => statSync(join(root, area, d)).isDirectory())
    .map((d) => {
      const dir = join(root, area, d);
      const json = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
        name: string;
        dependencies?: Record<string, string>;
        devDependencies?: Record<string, string>;
        files?: string[];
      };
      // A package published as a bundle (it has `files`) declares the workspace packages it bundles as
      // devDependencies: a user installing it must not be sent looking for them.
      const bundled = json.files ? Object.keys(json.devDependencies ?? {}).filter((d) => d.startsWith("@orch/")) : [];
      const dependencies = [...Object.keys(json.dependencies ?? {}), ...bundled];
      const imported = new Set<string>();
      const src = join(dir, "src");
      for (const file of statSafe(src) ? sources(src) : []) {
        for (const m of readFileSync(file, "utf8").matchAll(/from "(@orch\/[a-z-]+)/g)) imported.add(m[1]!);
      }
      return { name: json.name, dir, area, declared: new Set(dependencies), imported };
    }),
);

function statSafe(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

const byName = new Map(packages.map((p) => [p.name, p]));

describe("workspace boundaries", () => {
  it("libs import only libs", () => {
    for (const p of packages.filter((x) => x.area === "libs")) {
      for (const dep of p.imported) expect(byName.get(dep)?.area, `${p.name} imports ${dep}`).toBe("libs");
    }
  });

  it("declares every workspace package it imports", () => {
    for (const p of packages) {
      for (const dep of p.imported) {
        if (dep !== p.name) expect(p.declared.has(dep), `${p.name} imports ${dep} without declaring it`).toBe(true);
      }
    }
  });

  it("keeps the client SDK off the server: nothing it depends on reaches the storage engine", () => {
    const closure = new Set<string>();
    const walk = (name: string) => {
      for (const dep of byName.get(name)?.declared ?? []) {
        if (closure.has(dep)) continue;
        closure.add(dep);
        walk(dep);
      }
    };
    walk("@orch/client");
    expect([...closure].filter((d) => ["@orch/storage", "better-sqlite3", "drizzle-orm"].includes(d))).toEqual([]);
  });

  it("has no import cycles between packages", () => {
    const visiting = new Set<string>();
    const done = new Set<string>();
    const visit = (name: string, path: string[]) => {
      if (done.has(name)) return;
      expect(visiting.has(name), `cycle: ${[...path, name].join(" → ")}`).toBe(false);
      visiting.add(name);
      for (const dep of byName.get(name)?.imported ?? []) if (dep !== name) visit(dep, [...path, name]);
      visiting.delete(name);
      done.add(name);
    };
    for (const p of packages) visit(p.name, []);
  });

  it("has no import cycles between the files of a package", () => {
    const files = packages.flatMap((p) => (statSafe(join(p.dir, "src")) ? sources(join(p.dir, "src")) : []));
    const imports = new Map<string, string[]>();
    for (const file of files) {
      const targets: string[] = [];
      for (const m of readFileSync(file, "utf8").matchAll(/^(?:import|export)\s[^;]*?from\s+"(\.[^"]+)"/gms)) {
        const target = resolve(dirname(file), m[1]!.replace(/\.js$/, ".ts"));
        if (existsSync(target)) targets.push(target);
      }
      imports.set(file, targets);
    }
    const state = new Map<string, "visiting" | "done">();
    const visit = (file: string, path: string[]) => {
      if (state.get(file) === "done") return;
      const cycle = [...path.slice(path.indexOf(file)), file].map((f) => relative(root, f)).join(" → ");
      expect(state.get(file), `cycle: ${cycle}`).not.toBe("visiting");
      state.set(file, "visiting");
      for (const target of imports.get(file) ?? []) visit(target, [...path, file]);
      state.set(file, "done");
    };
    for (const file of files) visit(file, []);
  });
});
