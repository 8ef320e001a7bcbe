// Kubernetes' own CEL validation cases: the table of apiextensions-apiserver v0.32
// pkg/apiserver/schema/cel/validation_test.go TestValidationExpressions (Apache-2.0, the Kubernetes
// authors), transpiled into fixtures/k8s-validation-expressions.json by the script beside it (cases
// whose Go it cannot read are listed there as not ported). As in that test, each valid rule is put on
// the case's schema and must pass on its object without any error, and each error rule must fail with
// Invalid errors that contain the expected text. Prints the pass rate; fails on a case not in the
// known-failures file, and on a listed case that passes.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type JSONSchemaProps, crdSchemaFor } from "@orch/api";
import { FieldPath, fieldErrorText } from "@orch/machinery";
import * as v from "valibot";
import { afterAll, describe, expect, it } from "vitest";
import { validateRulesCosted } from "../src/cel.js";
import { compileNode } from "../src/structural.js";

interface Case {
  name: string;
  schema: Record<string, unknown>;
  obj: unknown;
  oldObj: unknown;
  isRoot: boolean;
  valid: string[];
  errors: Record<string, string>;
  /** The runtime cost Kubernetes' validator took for each valid rule (costBudget - remainingBudget). */
  expectedCost?: number;
}

const dir = join(import.meta.dirname, "fixtures");
const { cases } = JSON.parse(readFileSync(join(dir, "k8s-validation-expressions.json"), "utf8")) as { cases: Case[] };
const knownFailures = new Map(
  readFileSync(join(dir, "k8s-validation-expressions.known-failures.txt"), "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "" && !l.startsWith("#"))
    .map((l) => {
      const at = l.lastIndexOf(" # ");
      return [at < 0 ? l : l.slice(0, at), at < 0 ? "" : l.slice(at + 3)] as const;
    }),
);

/** The errors of `rule` on the case's schema node (validation rules only, as Kubernetes' validator). */
function run(c: Case, rule: string, isRoot: boolean): string[] {
  const raw = v.parse(crdSchemaFor("x-kubernetes").JSONSchemaProps, { ...c.schema, "x-kubernetes-validations": [{ rule }] });
  const node = compileNode(raw as JSONSchemaProps, "x-kubernetes");
  const { errors, cost } = validateRulesCosted(node, c.obj, c.oldObj ?? undefined, FieldPath.root("root"), isRoot);
  if (c.expectedCost !== undefined && errors.length === 0 && cost !== c.expectedCost) return [`cost ${cost}, Kubernetes ${c.expectedCost}`];
  return errors.map(fieldErrorText);
}

/** Why a rule fails, or undefined when it behaves as in Kubernetes. */
function failure(c: Case, rule: string, expected: string | undefined): string | undefined {
  try {
    const errs = run(c, rule, expected === undefined ? c.isRoot : true);
    if (expected === undefined) return errs.length === 0 ? undefined : errs.join("; ");
    if (errs.length === 0) return "no error";
    const wrong = errs.filter((e) => !e.includes("Invalid value") || !e.includes(expected));
    return wrong.length === 0 ? undefined : wrong.join("; ");
  } catch (e) {
    return `threw: ${(e as Error).message}`;
  }
}

const totals = { passed: 0, total: 0 };
const failures: string[] = [];

describe("Kubernetes' TestValidationExpressions", () => {
  for (const c of cases) {
    it(c.name, () => {
      const rules: [string, string | undefined][] = [
        ...c.valid.map((r): [string, undefined] => [r, undefined]),
        ...Object.entries(c.errors),
      ];
      const regressions: string[] = [];
      const fixed: string[] = [];
      for (const [rule, expected] of rules) {
        const id = `${c.name}/${rule.replace(/\s*\n\s*/g, " ")}`;
        const why = failure(c, rule, expected);
        totals.total++;
        if (why === undefined) totals.passed++;
        else failures.push(`${id} # ${why.replace(/\s*\n\s*/g, " ").slice(0, 300)}`);
        if (why !== undefined && !knownFailures.has(id)) regressions.push(`${id}\n    ${why}`);
        if (why === undefined && knownFailures.has(id)) fixed.push(id);
      }
      expect(regressions, "rules that fail and are not in the known-failures file").toEqual([]);
      expect(fixed, "rules that pass now: remove them from the known-failures file").toEqual([]);
    });
  }
});

afterAll(() => {
  console.log(`Kubernetes TestValidationExpressions: ${totals.passed}/${totals.total} rules behave as in Kubernetes`);
  if (process.env.K8S_CEL_FAILURES) writeFileSync(process.env.K8S_CEL_FAILURES, `${failures.join("\n")}\n`);
});
