// The real kubectl against a control plane started the way the README says.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { connect as tcpConnect } from "node:net";
import { eventually } from "@orch/testing";
import { connect } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ControlPlane, busAs, startControlPlane } from "./control-plane.js";

const deployment = (name: string, labels: Record<string, string>) => `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
  labels: ${JSON.stringify(labels)}
spec:
  selector:
    matchLabels: {app: ${name}}
  template:
    metadata:
      labels: {app: ${name}}
    spec:
      containers:
      - name: main
        image: nginx:1.27
`;

let cp: ControlPlane;

beforeAll(async () => {
  cp = await startControlPlane();
});

afterAll(async () => {
  if (cp?.launcher.exitCode === null) await cp.stop();
});

async function apply(file: string, yaml: string, verb: "create" | "replace" = "create") {
  const path = `${cp.dataDir}/${file}`;
  await import("node:fs/promises").then((fs) => fs.writeFile(path, yaml));
  return cp.kubectl(verb, "-f", path);
}

describe("kubectl against orch", () => {
  it("writes a kubeconfig kubectl can use", async () => {
    expect(await readFile(cp.kubeconfig, "utf8")).toContain("client-certificate-data");
    const ns = await cp.kubectl("get", "namespaces", "-o", "name");
    expect(ns.stdout.trim().split("\n")).toContain("namespace/default");
  });

  it("lists every kind in api-resources", async () => {
    const out = await cp.kubectl("api-resources", "--no-headers");
    expect(out.code).toBe(0);
    for (const r of [
      "namespaces",
      "serviceaccounts",
      "podtemplates",
      "replicationcontrollers",
      "deployments",
      "certificatesigningrequests",
      "clustertrustbundles",
      "deviceclasses",
      "priorityclasses",
      "customresourcedefinitions",
    ]) {
      expect(out.stdout).toMatch(new RegExp(`^${r}\\s`, "m"));
    }
  });

  it("creates from YAML and reads back with get -o yaml", async () => {
    const created = await apply("web.yaml", deployment("web", { tier: "front" }));
    expect(created.stderr).toBe("");
    expect(created.stdout.trim()).toBe("deployment.apps/web created");
    const got = await cp.kubectl("get", "deployment", "web", "-o", "yaml");
    expect(got.stdout).toContain("name: web");
    expect(got.stdout).toMatch(/resourceVersion: "\d+"/);
    expect(got.stdout).toContain("replicas: 1"); // defaulted by the server
  });

  it("selects with -l and prints the server-side table", async () => {
    await apply("api.yaml", deployment("api", { tier: "back" }));
    const front = await cp.kubectl("get", "deployments", "-l", "tier=front");
    expect(front.stdout).toMatch(/^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE/);
    expect(front.stdout).toContain("web");
    expect(front.stdout).not.toContain("api");
    const notFront = await cp.kubectl("get", "deployments", "-l", "tier!=front", "-o", "name");
    expect(notFront.stdout.trim()).toBe("deployment.apps/api");
  });

  it("pages with --chunk-size", async () => {
    for (const n of ["c1", "c2", "c3"]) await apply(`${n}.yaml`, deployment(n, { chunk: "yes" }));
    const out = await cp.kubectl("get", "deployments", "-l", "chunk=yes", "--chunk-size=1", "-o", "name", "-v=6");
    expect(out.stdout.trim().split("\n")).toEqual(["deployment.apps/c1", "deployment.apps/c2", "deployment.apps/c3"]);
    // kubectl really paged: it followed continue tokens.
    expect(out.stderr).toMatch(/continue=/);
  });

  it("watches with get -w", async () => {
    const watcher = cp.spawnKubectl("get", "deployments", "-w", "-o", "name", "--request-timeout=15s");
    let seen = "";
    watcher.stdout!.on("data", (d: Buffer) => (seen += d.toString()));
    // kubectl prints its list first, then watches from the list's resourceVersion: a change after the
    // list is printed reaches the watch.
    try {
      await eventually("kubectl's list", () => seen.includes("deployment.apps/web"));
      await apply("watched.yaml", deployment("watched", {}));
      await eventually("the watch event", () => seen.includes("deployment.apps/watched"));
    } finally {
      watcher.kill();
    }
    expect(seen).toContain("deployment.apps/web");
    expect(seen).toContain("deployment.apps/watched");
  });

  it("replaces, patches, scales and deletes", async () => {
    const replaced = await apply("web.yaml", deployment("web", { tier: "front", version: "2" }), "replace");
    expect(replaced.stdout.trim()).toBe("deployment.apps/web replaced");
    const generation = Number((await cp.kubectl("get", "deployment", "web", "-o", "jsonpath={.metadata.generation}")).stdout);
    const patched = await cp.kubectl("patch", "deployment", "web", "--type=merge", "-p", '{"spec":{"replicas":3}}');
    expect(patched.stdout.trim()).toBe("deployment.apps/web patched");
    const fields = await cp.kubectl(
      "get",
      "deployment",
      "web",
      "-o",
      "jsonpath={.spec.replicas} {.metadata.labels.version} {.metadata.generation}",
    );
    // The patch changed the spec: one generation more.
    expect(fields.stdout).toBe(`3 2 ${generation + 1}`);
    const scaled = await cp.kubectl("scale", "deployment", "web", "--replicas=5", "--current-replicas=3");
    expect(scaled.stdout.trim()).toBe("deployment.apps/web scaled");
    const stale = await cp.kubectl("scale", "deployment", "web", "--replicas=1", "--current-replicas=3");
    expect(stale.stderr).toContain("Expected replicas to be 3, was 5");
    const deleted = await cp.kubectl("delete", "deployment", "web");
    expect(deleted.stdout.trim()).toBe('deployment.apps "web" deleted');
    const gone = await cp.kubectl("get", "deployment", "web");
    expect(gone.code).not.toBe(0);
    expect(gone.stderr).toContain('deployments.apps "web" not found');
  });

  it("creates with kubectl's generators, which send protobuf bodies", async () => {
    expect((await cp.kubectl("create", "namespace", "team")).stdout.trim()).toBe("namespace/team created");
    expect((await cp.kubectl("-n", "team", "create", "serviceaccount", "robot")).stdout.trim()).toBe("serviceaccount/robot created");
    const secret = await cp.kubectl("-n", "team", "create", "secret", "generic", "creds", "--from-literal=user=admin");
    expect(secret.stdout.trim()).toBe("secret/creds created");
    const deploy = await cp.kubectl("-n", "team", "create", "deployment", "api", "--image=nginx:1.27", "--replicas=2", "--port=8080");
    expect(deploy.stdout.trim()).toBe("deployment.apps/api created");
    const got = await cp.kubectl(
      "-n",
      "team",
      "get",
      "deployment",
      "api",
      "-o",
      "jsonpath={.spec.replicas} {.spec.template.spec.containers[0].image} {.spec.template.spec.containers[0].ports[0].containerPort}",
    );
    expect(got.stdout).toBe("2 nginx:1.27 8080");
    const data = await cp.kubectl("-n", "team", "get", "secret", "creds", "-o", "jsonpath={.data.user}");
    expect(Buffer.from(data.stdout, "base64").toString()).toBe("admin");
  });

  it("reports validation errors the way Kubernetes does", async () => {
    const bad = await apply("bad.yaml", deployment("Bad_Name", {}));
    expect(bad.code).not.toBe(0);
    // kubectl renders a 422 Status from its kind and causes, as it does for Kubernetes.
    expect(bad.stderr).toContain('The Deployment "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name"');
  });
});

describe("the control plane's processes", () => {
  it("publishes each committed change on NATS", async () => {
    expect(cp.natsUrl).toMatch(/^tls:\/\//);
    // As the apiserver's own bus identity: reading stored messages is for it alone.
    const nc = await connect(busAs(cp, "event-relay"));
    try {
      // A kind no controller writes to, so its last event is its creation.
      await cp.kubectl("create", "serviceaccount", "evented");
      const jsm = await nc.jetstreamManager();
      // The relay publishes right after commit; allow it a moment.
      const msg = await eventually(
        "the event on NATS",
        () =>
          jsm.streams
            .getMessage("ORCH_EVENTS", { last_by_subj: "orch.events.core.serviceaccounts.default.evented" })
            .catch(() => undefined),
        { timeoutMs: 5_000, intervalMs: 100 },
      );
      const event = msg.json<{ type: string; revision: number; object: { metadata: { name: string; resourceVersion: string } } }>();
      expect(event.type).toBe("ADDED");
      expect(event.object.metadata.name).toBe("evented");
      expect(String(event.revision)).toBe(event.object.metadata.resourceVersion);
      expect(msg.header.get("Orch-Revision")).toBe(String(event.revision));
    } finally {
      await nc.close();
    }
  });

  it("restarts a crashed apiserver", async () => {
    const pid = apiserverPid(cp.dataDir);
    expect(pid).toBeDefined();
    process.kill(pid!, "SIGKILL");
    let after: number | undefined;
    await eventually(
      "a new apiserver that answers",
      async () => {
        after = apiserverPid(cp.dataDir);
        return !!after && after !== pid && (await cp.kubectl("get", "namespace", "default", "-o", "name")).code === 0;
      },
      { timeoutMs: 15_000, intervalMs: 200 },
    );
    expect(after).toBeDefined();
    expect(after).not.toBe(pid);
    expect(cp.output.join("\n")).toMatch(/\[apiserver\] exited \(SIGKILL\); restarting in \d+ ms/);
    // Data written before the crash is still there.
    expect((await cp.kubectl("get", "serviceaccount", "evented", "-o", "name")).stdout.trim()).toBe("serviceaccount/evented");
  });
});

/** The apiserver child of this control plane: the node process whose environment names its data dir. */
function apiserverPid(dataDir: string): number | undefined {
  for (const line of execFileSync("ps", ["-eo", "pid,args"]).toString().split("\n")) {
    const m = /^\s*(\d+)\s+\S*node\S* \S*apps\/apiserver\/dist\/main\.mjs/.exec(line);
    if (!m) continue;
    try {
      const env = readFileSync(`/proc/${m[1]}/environ`, "utf8");
      if (env.includes(`ORCH_DATA_DIR=${dataDir}\0`)) return Number(m[1]);
    } catch {
      // exited meanwhile
    }
  }
  return undefined;
}

describe("stopping the control plane", () => {
  it("SIGTERM stops every process it started", async () => {
    const { dataDir } = cp;
    const port = Number(/https:\/\/127\.0\.0\.1:(\d+)/.exec(cp.output.join("\n"))?.[1]);
    expect(port).toBeGreaterThan(0);
    expect(await cp.stop()).toBe(0);
    const ps = execFileSync("ps", ["-eo", "args"]).toString();
    expect(ps).not.toContain(dataDir); // nats-server runs with its store in the data dir
    const refused = await new Promise((res) => {
      const s = tcpConnect(port, "127.0.0.1");
      s.once("connect", () => (s.destroy(), res(false)));
      s.once("error", () => res(true));
    });
    expect(refused).toBe(true);
  });
});
