// The files of a new controller app. Kept as plain template strings so what a user gets is readable
// here, in one place.

export interface ControllerSpec {
  /** App and process name, e.g. `widget-controller`. */
  name: string;
  /** The custom resource it reconciles. */
  kind: string;
  group: string;
  version: string;
  plural: string;
}

const singular = (s: ControllerSpec) => s.kind.toLowerCase();

export function packageJson(s: ControllerSpec): string {
  const pkg = {
    name: `@orch/${s.name}`,
    version: "0.0.0",
    private: true,
    type: "module",
    exports: { ".": { "@orch/source": "./src/reconciler.ts", default: "./src/reconciler.ts" }, "./package.json": "./package.json" },
    nx: { tags: ["type:app"] },
    dependencies: { "@orch/api": "*", "@orch/client": "*", "@orch/controller": "*" },
    devDependencies: { "@orch/testing": "*" },
  };
  return `${JSON.stringify(pkg, null, 2)}\n`;
}

export function mainTs(s: ControllerSpec): string {
  return `// ${s.name}: reconciles ${s.kind} objects (${s.group}/${s.version}). Run it with \`npm run ${s.name}\`
// against a running control plane, or let \`npm start\` run it with the others.
import { runControllerApp } from "@orch/controller";
import { type ${s.kind}, crdManifest, installCrd, reconcile${s.kind}, ${singular(s)}Resource } from "./reconciler.js";

await runControllerApp({
  name: "${s.name}",
  setup: async ({ client, profile, informer, runController }) => {
    // The informer lists ${s.plural} first, so the kind must be served before it starts.
    await installCrd(client, crdManifest(profile), ${singular(s)}Resource);
    const ${s.plural} = informer<${s.kind}>(${singular(s)}Resource);
    runController({
      name: "${s.plural}",
      sources: [${s.plural}],
      workers: 2,
      reconciler: { reconcile: (key) => reconcile${s.kind}(client, ${s.plural}, key) },
    });
  },
});
`;
}

export function reconcilerTs(s: ControllerSpec): string {
  return `// What ${s.name} does for one ${s.kind}: level-triggered, from the informer's cache, idempotent.
import type { NamingProfile } from "@orch/api";
import { type ApiClient, type Informer, type KubeObject, type ResourceRef, isAlreadyExists } from "@orch/client";
import { type Result, writeStatus } from "@orch/controller";

export interface ${s.kind} extends KubeObject {
  spec?: { message?: string };
  status?: { observedGeneration?: number; phase?: string; message?: string };
}

export const ${singular(s)}Resource: ResourceRef = { group: "${s.group}", version: "${s.version}", plural: "${s.plural}", namespaced: true };

/**
 * Brings one ${s.kind}'s status in line with its spec. Replace the body with your controller's logic:
 * read what you need from caches, change the world, then record what you observed in status.
 */
export async function reconcile${s.kind}(client: ApiClient, cache: Informer<${s.kind}>, key: string): Promise<Result> {
  const obj = cache.getByKey(key);
  if (!obj) return; // deleted: nothing to do
  const generation = obj.metadata?.generation;
  if (obj.status?.observedGeneration === generation && obj.status?.phase === "Ready") return;
  await writeStatus(client, ${singular(s)}Resource, obj, (o) => {
    o.status = { observedGeneration: generation, phase: "Ready", message: o.spec?.message ?? "" };
  });
}

/** Creates the CRD unless it exists, then waits until its resource is served (the crd-controller accepts it). */
export async function installCrd(client: ApiClient, crd: KubeObject, resource: ResourceRef): Promise<void> {
  const crds = { group: crd.apiVersion!.split("/")[0]!, version: "v1", plural: "customresourcedefinitions", namespaced: false };
  try {
    await client.create(crds, crd);
  } catch (e) {
    if (!isAlreadyExists(e)) throw e;
  }
  for (;;) {
    try {
      await client.list(resource, { limit: 1 });
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

/** The CustomResourceDefinition of ${s.kind}, for the naming profile the control plane runs with. */
export function crdManifest(profile: NamingProfile): KubeObject & { spec: unknown } {
  const x = profile.extensionPrefix;
  return {
    apiVersion: \`\${profile.group("apiextensions")}/v1\`,
    kind: "CustomResourceDefinition",
    metadata: { name: "${s.plural}.${s.group}" },
    spec: {
      group: "${s.group}",
      scope: "Namespaced",
      names: { kind: "${s.kind}", listKind: "${s.kind}List", plural: "${s.plural}", singular: "${singular(s)}" },
      versions: [
        {
          name: "${s.version}",
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: [
            { name: "Phase", type: "string", jsonPath: ".status.phase" },
            { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
          ],
          schema: {
            openAPIV3Schema: {
              type: "object",
              properties: {
                spec: { type: "object", properties: { message: { type: "string", maxLength: 256 } } },
                status: {
                  type: "object",
                  properties: {
                    observedGeneration: { type: "integer", format: "int64" },
                    phase: { type: "string", enum: ["Pending", "Ready"] },
                    message: { type: "string" },
                  },
                },
              },
              [\`\${x}-validations\`]: [{ rule: "!has(self.spec) || !has(self.spec.message) || self.spec.message != 'forbidden'", message: "spec.message must not be 'forbidden'" }],
            },
          },
        },
      ],
    },
  };
}
`;
}

export function testTs(s: ControllerSpec): string {
  return `// ${s.name} against a real control plane: nats-server, the apiserver and the crd-controller as
// processes, and this app as its own process, killed and restarted mid-way.
import { namingProfile } from "@orch/api";
import { ApiClient } from "@orch/client";
import { type ApiserverProcess, type NatsServer, startApiserverProcess, startNatsServer } from "@orch/testing";
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ${s.kind}, crdManifest, installCrd, ${singular(s)}Resource } from "../src/reconciler.js";

const appDir = join(dirname(fileURLToPath(import.meta.url)), "..");

/** The workspace root: the nearest directory above with the crd-controller app in it. */
function workspaceRoot(from: string): string {
  for (let dir = from; dirname(dir) !== dir; dir = dirname(dir)) {
    if (existsSync(join(dir, "apps", "crd-controller"))) return dir;
  }
  throw new Error(\`no orch workspace above \${from}\`);
}
const repoRoot = workspaceRoot(appDir);

let nats: NatsServer;
let apiserver: ApiserverProcess;
let client: ApiClient;
const processes: ChildProcess[] = [];

function run(bundle: string): ChildProcess {
  const child = spawn(process.execPath, [bundle], {
    env: { ...process.env, ORCH_DATA_DIR: apiserver.dataDir, ORCH_NATS_URL: nats.url, ORCH_PROFILE: "orch" },
    stdio: "ignore",
  });
  processes.push(child);
  return child;
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(\`timed out waiting for \${what}\`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const converged = async (generation: number) => {
  const list = await client.listAll<${s.kind}>(${singular(s)}Resource, { namespace: "default" });
  return list.items.length === 20 && list.items.every((o) => o.status?.phase === "Ready" && o.status.observedGeneration === generation);
};

beforeAll(async () => {
  nats = await startNatsServer();
  apiserver = await startApiserverProcess({ natsUrl: nats.url });
  client = ApiClient.fromKubeconfig(apiserver.kubeconfigPath);
  run(join(repoRoot, "apps", "crd-controller", "dist", "main.mjs"));
  await installCrd(client, crdManifest(namingProfile("orch")), ${singular(s)}Resource);
}, 60_000);

afterAll(async () => {
  for (const p of processes) p.kill("SIGKILL");
  client?.close();
  await apiserver?.dispose();
  await nats?.stop();
});

describe("${s.name}", () => {
  it("reconciles every ${s.kind}, also across a crash of the controller", async () => {
    const controller = run(join(appDir, "dist", "main.mjs"));
    for (let i = 0; i < 20; i++) {
      await client.create<${s.kind}>(${singular(s)}Resource, { apiVersion: "${s.group}/${s.version}", kind: "${s.kind}", metadata: { name: \`w-\${i}\` }, spec: { message: "hello" } }, { namespace: "default" });
    }
    await until("every ${s.kind} to be Ready", () => converged(1));

    controller.kill("SIGKILL");
    for (let i = 0; i < 20; i++) {
      const obj = await client.get<${s.kind}>(${singular(s)}Resource, \`w-\${i}\`, { namespace: "default" });
      await client.update<${s.kind}>(${singular(s)}Resource, { ...obj, spec: { message: "changed" } });
    }
    run(join(appDir, "dist", "main.mjs"));
    await until("every ${s.kind} to be Ready at generation 2", () => converged(2));
    const one = await client.get<${s.kind}>(${singular(s)}Resource, "w-7", { namespace: "default" });
    expect(one.status).toEqual({ observedGeneration: 2, phase: "Ready", message: "changed" });
  });

  it("rejects what the CRD's CEL rule forbids", async () => {
    await expect(
      client.create<${s.kind}>(${singular(s)}Resource, { apiVersion: "${s.group}/${s.version}", kind: "${s.kind}", metadata: { name: "bad" }, spec: { message: "forbidden" } }, { namespace: "default" }),
    ).rejects.toMatchObject({ status: { code: 422 } });
  });
});
`;
}

export function readme(s: ControllerSpec): string {
  return `# ${s.name}

Reconciles \`${s.kind}\` objects (\`${s.group}/${s.version}\`, resource \`${s.plural}\`): sets \`status.phase\`
to \`Ready\` and \`status.observedGeneration\` to the generation it saw. Generated by \`npm run new-controller\`;
replace \`reconcile${s.kind}\` in \`src/reconciler.ts\` with your logic. At start it installs its
CustomResourceDefinition (\`crdManifest\`) unless it exists and waits until the kind is served.

\`\`\`sh
npm run ${s.name}                # this controller alone, against a running control plane
npx vitest run apps/${s.name}    # its test (after npm run build)
kubectl --kubeconfig .orch/kubeconfig get ${s.plural}
\`\`\`
`;
}
