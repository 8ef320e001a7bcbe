// The cel-spec conformance suite (google/cel-spec tests/simple/testdata, the files of the features
// Kubernetes enables) through orch's CRD rule environment. Prints the pass rate per file and in all;
// fails when a case not listed in known-failures.txt fails (a regression) or a listed case passes (then
// remove its line: the floor rises).
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type Outcome, casesOf, runCase } from "./conformance/cel-spec.js";

const dir = join(import.meta.dirname, "conformance");
const files = readdirSync(join(dir, "testdata"))
  .filter((f) => f.endsWith(".textproto"))
  .sort();

/** `id # reason` per line (ids may hold spaces); a line starting with `#` is a comment. */
const knownFailures = new Map(
  readFileSync(join(dir, "known-failures.txt"), "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "" && !l.startsWith("#"))
    .map((l) => {
      const at = l.indexOf(" # ");
      return [at < 0 ? l.trim() : l.slice(0, at), at < 0 ? "" : l.slice(at + 3).trim()] as const;
    }),
);

const totals = { passed: 0, total: 0 };
const lines: string[] = [];
const failures: string[] = [];

describe("cel-spec conformance", () => {
  for (const file of files) {
    it(file, () => {
      const results = casesOf(join(dir, "testdata", file)).map((c) => ({ c, outcome: runCase(c) as Outcome }));
      const passed = results.filter((r) => r.outcome.pass).length;
      totals.passed += passed;
      totals.total += results.length;
      lines.push(`cel-spec conformance: ${passed}/${results.length} passed (${file})`);
      const regressions: string[] = [];
      const fixed: string[] = [];
      for (const { c, outcome } of results) {
        if (!outcome.pass) failures.push(`${c.id} # ${outcome.detail.split("\n")[0]} ;; ${c.expr.replace(/[\r\n]/g, " ")}`);
        if (!outcome.pass && !knownFailures.has(c.id)) regressions.push(`${c.id}: ${c.expr}\n    ${outcome.detail}`);
        if (outcome.pass && knownFailures.has(c.id)) fixed.push(c.id);
      }
      expect(regressions, "cases that fail and are not in known-failures.txt").toEqual([]);
      expect(fixed, "cases that pass now: remove them from known-failures.txt").toEqual([]);
    });
  }
});

afterAll(() => {
  lines.push(`cel-spec conformance: ${totals.passed}/${totals.total} passed (all)`);
  console.log(lines.join("\n"));
  // CEL_CONFORMANCE_FAILURES=<file> writes every failing case with its detail (to triage the list).
  if (process.env.CEL_CONFORMANCE_FAILURES) writeFileSync(process.env.CEL_CONFORMANCE_FAILURES, `${failures.join("\n")}\n`);
});
