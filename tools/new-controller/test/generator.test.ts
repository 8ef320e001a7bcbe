// The generator writes an app that type-checks, builds and reconciles: its own generated test runs here
// against real processes (nats-server, apiserver, crd-controller, the new app), as a user would run it.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { afterAll, describe, expect, it } from "vitest";
import { controllerSpec, generateController, kindFromName } from "../src/index.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
// Inside the workspace, so @orch/* resolve from its node_modules; ignored by git and by the suite's globs.
const scratch = join(root, ".generated", `t-${process.pid}`);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("controllerSpec", () => {
  it("derives the kind, plural and version from the name", () => {
    expect(kindFromName("widget-controller")).toBe("Widget");
    expect(kindFromName("fancy-gadget")).toBe("FancyGadget");
    expect(controllerSpec("widget-controller")).toEqual({
      name: "widget-controller",
      kind: "Widget",
      group: "example.com",
      version: "v1alpha1",
      plural: "widgets",
    });
  });

  it("refuses names that cannot be a process, a kind or a group", () => {
    expect(() => controllerSpec("Widget_Controller")).toThrow(/DNS label/);
    expect(() => controllerSpec("w", { kind: "lower" })).toThrow(/CamelCase/);
    expect(() => controllerSpec("w", { group: "nodot" })).toThrow(/must contain a dot/);
  });
});

describe("generateController", () => {
  it("writes an app that type-checks, builds, and whose own test passes against a real control plane", { timeout: 240_000 }, async () => {
    const spec = controllerSpec("gizmo-controller", { group: "gizmos.example.com" });
    const dir = join(scratch, "apps", spec.name);
    const written = generateController(scratch, dir, spec);
    expect(written.sort()).toEqual([
      "apps/gizmo-controller/README.md",
      "apps/gizmo-controller/package.json",
      "apps/gizmo-controller/src/main.ts",
      "apps/gizmo-controller/src/reconciler.ts",
      "apps/gizmo-controller/test/gizmo-controller.test.ts",
    ]);
    expect(() => generateController(scratch, dir, spec)).toThrow(/already exists/);

    writeFileSync(
      join(scratch, "tsconfig.json"),
      JSON.stringify({ extends: join(root, "tsconfig.base.json"), include: ["apps/*/src/**/*.ts", "apps/*/test/**/*.ts"] }),
    );
    const tsc = spawnSync(
      process.execPath,
      [join(root, "node_modules", "typescript", "bin", "tsc"), "-p", join(scratch, "tsconfig.json")],
      { encoding: "utf8" },
    );
    expect(tsc.stdout + tsc.stderr).toBe("");

    // Built as tools/build.mjs builds every app.
    await build({
      entryPoints: [join(dir, "src", "main.ts")],
      outfile: join(dir, "dist", "main.mjs"),
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      conditions: ["@orch/source"],
      external: ["better-sqlite3"],
      banner: {
        js: "import { createRequire as __orchCreateRequire } from 'node:module'; const require = __orchCreateRequire(import.meta.url);",
      },
      logLevel: "warning",
    });

    mkdirSync(scratch, { recursive: true });
    const config = join(scratch, "vitest.config.mjs");
    writeFileSync(
      config,
      `export default { resolve: { conditions: ["@orch/source"] }, ssr: { resolve: { conditions: ["@orch/source"] } }, test: { include: ["apps/*/test/**/*.test.ts"], testTimeout: 120000, hookTimeout: 120000 } };\n`,
    );
    const vitest = join(root, "node_modules", "vitest", "vitest.mjs");
    let output = "";
    try {
      output = execFileSync(process.execPath, [vitest, "run", "--root", scratch, "--config", config], { encoding: "utf8", stdio: "pipe" });
    } catch (e) {
      const failed = e as { stdout?: string; stderr?: string };
      throw new Error(`the generated test failed:\n${failed.stdout ?? ""}\n${failed.stderr ?? ""}`);
    }
    expect(output).toMatch(/Tests\s+.*2 passed/);
    expect(readFileSync(join(dir, "README.md"), "utf8")).toContain("npm run gizmo-controller");
  });
});
