// The corpus of real CRDs (apps/apiserver/test/fixtures/crd-corpus) as a user installs it: `kubectl
// create -f` of every CRD file, the real crd-controller establishing them, `kubectl wait`, then
// `kubectl apply` of every project example (kubectl validates strictly, so an unknown field fails).
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { parseAllDocuments, stringify } from "yaml";
import { type ControlPlane, kubectlOk, startControlPlane } from "./control-plane.js";

const corpus = resolve(import.meta.dirname, "..", "..", "..", "apps", "apiserver", "test", "fixtures", "crd-corpus");
const projects = readdirSync(corpus, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name);
const docs = (file: string) =>
  parseAllDocuments(readFileSync(file, "utf8"))
    .map((d) => d.toJS() as Record<string, any> | null)
    .filter((o): o is Record<string, any> => !!o && typeof o === "object" && "kind" in o);

let cp: ControlPlane;
beforeAll(async () => {
  cp = await startControlPlane({ ORCH_PROFILE: "kubernetes", ORCH_CONTROLLERS: "crd-controller" });
}, 30_000);
afterAll(() => cp?.stop());

it("installs every CRD of the corpus with kubectl, the crd-controller establishes them, and every example applies", async () => {
  const served = new Set<string>();
  let crds = 0;
  for (const project of projects) {
    for (const file of readdirSync(join(corpus, project)).filter((f) => f.startsWith("crd-"))) {
      const path = join(corpus, project, file);
      expect(await kubectlOk(cp, "create", "-f", path)).toMatch(/customresourcedefinition\.apiextensions\.k8s\.io\/\S+ created/);
      for (const crd of docs(path)) {
        crds++;
        for (const v of crd.spec.versions) if (v.served) served.add(`${crd.spec.group}/${v.name}/${crd.spec.names.kind}`);
      }
    }
  }
  expect(crds).toBeGreaterThanOrEqual(18);
  await kubectlOk(cp, "wait", "--for", "condition=established", "--timeout=60s", "crd", "--all");

  let applied = 0;
  let expected = 0;
  for (const [i, project] of projects.entries()) {
    const examples = join(corpus, project, "examples");
    for (const [j, file] of readdirSync(examples).entries()) {
      // Only the corpus's kinds: the examples also hold Services, Secrets and kinds of other CRDs.
      const objects = docs(join(examples, file)).filter((o) => served.has(`${o.apiVersion}/${o.kind}`));
      if (objects.length === 0) continue;
      // A namespace per file: projects reuse names across their examples.
      const ns = `ex-${i}-${j}`;
      await kubectlOk(cp, "create", "namespace", ns);
      for (const o of objects) delete o.metadata.namespace;
      const manifest = join(cp.dataDir, `${project}-${file}`);
      writeFileSync(manifest, objects.map((o) => stringify(o)).join("---\n"));
      const out = await kubectlOk(cp, "apply", "-n", ns, "-f", manifest);
      expected += objects.length;
      applied += out.split("\n").filter((l) => / created$/.test(l)).length;
    }
  }
  expect(applied).toBe(expected);
  expect(applied).toBeGreaterThanOrEqual(35);
}, 180_000);
