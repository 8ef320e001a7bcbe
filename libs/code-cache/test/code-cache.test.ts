import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Script } from "node:vm";
import { afterAll, describe, expect, it, vi } from "vitest";
import { runBundle, runCommonJs } from "../src/index.js";

const dir = mkdtempSync(join(tmpdir(), "orch-code-cache-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Large enough that V8 has functions worth caching, and each run's result shows which source ran.
const bundle = (answer: number) => `
const { join } = require("node:path");
function compute() { let n = 0; for (let i = 0; i < 10; i++) n += i; return n; }
exports.answer = ${answer};
exports.computed = compute();
exports.where = { filename: __filename, dirname: __dirname, url: __importMetaUrl, joined: join(__dirname, "x") };
exports.self = this === exports;
`;

const caches = () => readdirSync(dir).filter((f) => f.endsWith(".cache"));

describe("runCommonJs", () => {
  it("runs the bundle as CommonJS, writes a cache once asked, and compiles from it on the next run", () => {
    const file = join(dir, "bundle.cjs");
    writeFileSync(file, bundle(1));

    const first = runCommonJs(file);
    expect(first.exports).toEqual({
      answer: 1,
      computed: 45,
      where: { filename: file, dirname: dir, url: pathToFileURL(file).href, joined: join(dir, "x") },
      self: true,
    });
    expect(first.fromCache).toBe(false);
    expect(caches()).toEqual([]);
    first.saveCache();
    expect(caches()).toHaveLength(1);

    const second = runCommonJs(file);
    expect(second.fromCache).toBe(true);
    expect(second.exports.answer).toBe(1);
    second.saveCache(); // nothing to write: the cache was used
    expect(caches()).toHaveLength(1);
    expect(readdirSync(dir).filter((f) => f.endsWith(".tmp"))).toEqual([]);
  });

  it("never runs a cache made for another version of the bundle, even one of the same length", () => {
    const file = join(dir, "rebuilt.cjs");
    writeFileSync(file, bundle(2));
    runCommonJs(file).saveCache();
    // Same length, other content: V8 alone would take the old cache (it checks only the length).
    writeFileSync(file, bundle(3));
    const rebuilt = runCommonJs(file);
    expect(rebuilt.fromCache).toBe(false);
    expect(rebuilt.exports.answer).toBe(3);
  });

  it("starts without a cache where it cannot write one, and does not serialize it for nothing", () => {
    const gone = mkdtempSync(join(tmpdir(), "orch-code-cache-"));
    const file = join(gone, "bundle.cjs");
    writeFileSync(file, bundle(4));
    const run = runCommonJs(file);
    rmSync(gone, { recursive: true, force: true }); // the write of the cache fails, even for root
    const serialize = vi.spyOn(Script.prototype, "createCachedData");
    try {
      expect(() => run.saveCache()).not.toThrow();
      expect(serialize).not.toHaveBeenCalled();
    } finally {
      serialize.mockRestore();
    }
    expect(run.exports.answer).toBe(4);
  });
});

describe("runBundle", () => {
  it("saves the cache once the bundle's ready export resolves; a start that fails rejects and saves nothing", async () => {
    const before = caches().length;
    const file = join(dir, "app.cjs");
    writeFileSync(file, `${bundle(5)}\nexports.ready = new Promise((resolve) => (globalThis.__orchReady = resolve));`);
    const running = runBundle(pathToFileURL(file), "ready");
    await new Promise((resolve) => setTimeout(resolve, 20));
    // Still starting: the functions its start runs are not compiled yet, so nothing is saved.
    expect(caches()).toHaveLength(before);
    (globalThis as { __orchReady?: () => void }).__orchReady!();
    await running;
    expect(caches()).toHaveLength(before + 1);

    const failing = join(dir, "failing.cjs");
    writeFileSync(failing, `${bundle(6)}\nexports.ready = Promise.reject(new Error("no kubeconfig"));`);
    await expect(runBundle(pathToFileURL(failing), "ready")).rejects.toThrow("no kubeconfig");
    expect(caches()).toHaveLength(before + 1);
  });
});
