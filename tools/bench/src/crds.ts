// Custom resources: the time to establish the largest CRD of the corpus (apps/apiserver/test/fixtures/
// crd-corpus) on a control plane with its crd-controller, and creates/s of a custom resource whose
// schema carries 20 CEL rules beside creates/s of a built-in kind (ServiceAccount), in one run.
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Pool } from "undici";
import { parseAllDocuments } from "yaml";
import { type LoadResult, percentile, runLoad } from "./load.js";

const CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface CrdFigures {
  largest: { file: string; bytes: number; versions: number };
  /** create → Established and its first version served, each run (ms, sorted). */
  establish: number[];
  plain: LoadResult;
  withRules: LoadResult;
}

/** The largest CRD file of the corpus, parsed. */
function largestCrd(root: string): { file: string; bytes: number; crd: any } {
  const dir = join(root, "apps", "apiserver", "test", "fixtures", "crd-corpus");
  let best: { file: string; bytes: number } | undefined;
  for (const project of readdirSync(dir)) {
    if (!statSync(join(dir, project)).isDirectory()) continue;
    for (const f of readdirSync(join(dir, project)).filter((n) => n.startsWith("crd-"))) {
      const bytes = statSync(join(dir, project, f)).size;
      if (!best || bytes > best.bytes) best = { file: `${project}/${f}`, bytes };
    }
  }
  if (!best) throw new Error("no CRD in the corpus");
  const crd = parseAllDocuments(readFileSync(join(dir, best.file), "utf8"))
    .map((d) => d.toJS())
    .find((o) => o?.kind === "CustomResourceDefinition");
  return { ...best, crd };
}

async function call(p: Pool, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await p.request({
    path,
    method: method as "GET",
    headers: { "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.body.text();
  return { status: res.statusCode, body: text ? JSON.parse(text) : undefined };
}

const established = (crd: any) =>
  (crd?.status?.conditions ?? []).some((c: { type: string; status: string }) => c.type === "Established" && c.status === "True");

/** Creates `crd` and waits until it is Established and its storage version's list answers 200. */
async function establish(p: Pool, crd: any): Promise<number> {
  const t0 = performance.now();
  const created = await call(p, "POST", CRDS, crd);
  if (created.status !== 201) throw new Error(`creating ${crd.metadata.name}: ${created.status} ${JSON.stringify(created.body)}`);
  const version = crd.spec.versions.find((v: { storage: boolean }) => v.storage).name;
  const list =
    crd.spec.scope === "Namespaced"
      ? `/apis/${crd.spec.group}/${version}/namespaces/default/${crd.spec.names.plural}`
      : `/apis/${crd.spec.group}/${version}/${crd.spec.names.plural}`;
  for (;;) {
    const got = await call(p, "GET", `${CRDS}/${crd.metadata.name}`);
    if (established(got.body) && (await call(p, "GET", list)).status === 200) return performance.now() - t0;
    await sleep(2);
  }
}

async function remove(p: Pool, name: string): Promise<void> {
  await call(p, "DELETE", `${CRDS}/${name}`);
  while ((await call(p, "GET", `${CRDS}/${name}`)).status !== 404) await sleep(10);
}

/** A Widget: twenty rules of the kinds real CRDs use (sizes, formats, cross-field, lists, maps, regex). */
export const widgetCrd = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "widgets.bench.example.com" },
  spec: {
    group: "bench.example.com",
    scope: "Namespaced",
    names: { plural: "widgets", singular: "widget", kind: "Widget" },
    versions: [
      {
        name: "v1",
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: "object",
            properties: {
              spec: {
                type: "object",
                required: ["replicas", "image"],
                "x-kubernetes-validations": [
                  { rule: "self.replicas >= 0 && self.replicas <= 100", message: "replicas in 0..100" },
                  { rule: "!has(self.minReplicas) || self.minReplicas <= self.replicas", message: "minReplicas ≤ replicas" },
                  { rule: "self.image.contains(':') || self.image.contains('@')", message: "image needs a tag or digest" },
                  { rule: "!has(self.ports) || self.ports.all(p, p.port > 0 && p.port < 65536)", message: "ports in range" },
                  {
                    rule: "!has(self.ports) || self.ports.all(p, self.ports.exists_one(q, q.name == p.name))",
                    message: "port names unique",
                  },
                  { rule: "!has(self.mode) || self.mode in ['Active', 'Passive', 'Standby']", message: "unknown mode" },
                  {
                    rule: "!has(self.host) || self.host.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",
                    message: "host",
                  },
                  { rule: "!has(self.address) || isIP(self.address)", message: "address must be an IP" },
                  { rule: "!has(self.network) || isCIDR(self.network)", message: "network must be a CIDR" },
                  { rule: "!has(self.memory) || quantity(self.memory).isLessThan(quantity('64Gi'))", message: "memory below 64Gi" },
                  { rule: "!has(self.labels) || self.labels.all(k, size(k) <= 63)", message: "label keys ≤ 63" },
                  { rule: "!has(self.labels) || !('forbidden' in self.labels)", message: "no forbidden label" },
                  { rule: "!has(self.tags) || size(self.tags) <= 10", message: "at most 10 tags" },
                  { rule: "!has(self.tags) || self.tags.all(t, t.startsWith('t-'))", message: "tags start with t-" },
                  { rule: "!has(self.url) || isURL(self.url) && url(self.url).getScheme() == 'https'", message: "url must be https" },
                  { rule: "!has(self.timeout) || self.timeout <= duration('1h')", message: "timeout at most 1h" },
                  { rule: "!has(self.paused) || !self.paused || self.replicas == 0", message: "a paused widget has no replicas" },
                  { rule: "!has(self.owner) || format.dns1123Label().validate(self.owner).hasValue() == false", message: "owner" },
                  { rule: "self.image.size() <= 255", message: "image at most 255" },
                  { rule: "!has(self.weights) || self.weights.sum() == 100", message: "weights add up to 100" },
                ],
                properties: {
                  replicas: { type: "integer" },
                  minReplicas: { type: "integer" },
                  image: { type: "string", maxLength: 255 },
                  mode: { type: "string", maxLength: 16 },
                  host: { type: "string", maxLength: 253 },
                  address: { type: "string", maxLength: 45 },
                  network: { type: "string", maxLength: 49 },
                  memory: { type: "string", maxLength: 16 },
                  url: { type: "string", maxLength: 512 },
                  owner: { type: "string", maxLength: 63 },
                  timeout: { type: "string", format: "duration" },
                  paused: { type: "boolean" },
                  weights: { type: "array", maxItems: 10, items: { type: "integer" } },
                  tags: { type: "array", maxItems: 32, items: { type: "string", maxLength: 32 } },
                  labels: { type: "object", maxProperties: 32, additionalProperties: { type: "string", maxLength: 63 } },
                  ports: {
                    type: "array",
                    maxItems: 16,
                    items: {
                      type: "object",
                      required: ["name", "port"],
                      properties: { name: { type: "string", maxLength: 15 }, port: { type: "integer" } },
                    },
                  },
                },
              },
            },
          },
        },
      },
    ],
  },
};

const widget = (name: string) =>
  JSON.stringify({
    apiVersion: "bench.example.com/v1",
    kind: "Widget",
    metadata: { name },
    spec: {
      replicas: 3,
      minReplicas: 1,
      image: "registry.example.com/widget:1.2.3",
      mode: "Active",
      host: "widget.example.com",
      address: "10.0.0.12",
      network: "10.0.0.0/24",
      memory: "512Mi",
      url: "https://widget.example.com/hook",
      owner: "team-a",
      timeout: "30s",
      paused: false,
      weights: [60, 40],
      tags: ["t-one", "t-two"],
      labels: { app: "widget", tier: "backend" },
      ports: [
        { name: "http", port: 8080 },
        { name: "metrics", port: 9090 },
      ],
    },
  });

const serviceAccount = (name: string) => JSON.stringify({ apiVersion: "v1", kind: "ServiceAccount", metadata: { name } });

/** The CRD figures, against a control plane serving the kubernetes profile with its crd-controller. */
export async function crdFigures(root: string, p: Pool, creates: number, concurrency: number, runs = 3): Promise<CrdFigures> {
  const { file, bytes, crd } = largestCrd(root);
  const establish_: number[] = [];
  for (let i = 0; i < runs; i++) {
    establish_.push(await establish(p, crd));
    await remove(p, crd.metadata.name);
  }
  establish_.sort((a, b) => a - b);

  await establish(p, widgetCrd);
  const post = (path: string, body: (i: number) => string, count = creates) =>
    runLoad(
      count,
      concurrency,
      async (i) => {
        const res = await p.request({ path, method: "POST", headers: { "content-type": "application/json" }, body: body(i) });
        await res.body.dump();
        return res.statusCode;
      },
      201,
    );
  // Warm both paths (compiled rules, caches), then measure them one after the other.
  await post("/api/v1/namespaces/default/serviceaccounts", (i) => serviceAccount(`warm-${i}`), 300);
  await post("/apis/bench.example.com/v1/namespaces/default/widgets", (i) => widget(`warm-${i}`), 300);
  const plain = await post("/api/v1/namespaces/default/serviceaccounts", (i) => serviceAccount(`sa-${i}`));
  const withRules = await post("/apis/bench.example.com/v1/namespaces/default/widgets", (i) => widget(`w-${i}`));
  return { largest: { file, bytes, versions: crd.spec.versions.length }, establish: establish_, plain, withRules };
}

export const median = (sorted: number[]) => percentile(sorted, 50);
