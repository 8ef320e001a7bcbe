// The real kubectl with Services: `kubectl cluster-info` finds the control plane, `kubectl expose
// deployment` makes a Service with an address from the range, and `kubectl get svc,endpoints,endpointslices`
// prints Kubernetes' columns for the Service and what the endpoints controller wrote for it.
import { eventually } from "@orch/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ControlPlane, kubectlOk, startControlPlane } from "./control-plane.js";

let cp: ControlPlane;

beforeAll(async () => {
  cp = await startControlPlane();
});

afterAll(async () => {
  if (cp?.launcher.exitCode === null) await cp.stop();
});

const ok = (...args: string[]) => kubectlOk(cp, ...args);

describe("kubectl with Services", () => {
  it("cluster-info prints the control plane's URL", async () => {
    const server = /server: (\S+)/.exec(await ok("config", "view", "-o", "yaml"))?.[1];
    const out = await ok("cluster-info");
    // kubectl colours the URL; the text around it is Kubernetes'.
    expect(out.replace(/\x1b\[[0-9;]*m/g, "")).toContain(`Kubernetes control plane is running at ${server}`);
  });

  it("lists the kubernetes Service in default", async () => {
    const lines = (await ok("get", "svc", "kubernetes")).trim().split("\n");
    expect(lines[0]).toMatch(/^NAME\s+TYPE\s+CLUSTER-IP\s+EXTERNAL-IP\s+PORT\(S\)\s+AGE$/);
    expect(lines[1]).toMatch(/^kubernetes\s+ClusterIP\s+10\.96\.0\.1\s+<none>\s+443\/TCP\s+\d+[sm]$/);
  });

  it("exposes a deployment, and prints the Service, its Endpoints and its EndpointSlice", async () => {
    await ok("create", "namespace", "svc");
    expect(await ok("-n", "svc", "create", "deployment", "web", "--image=nginx")).toBe("deployment.apps/web created\n");
    expect(await ok("-n", "svc", "expose", "deployment", "web", "--port", "80")).toBe("service/web exposed\n");
    const service = JSON.parse(await ok("-n", "svc", "get", "svc", "web", "-o", "json"));
    expect(service.spec).toMatchObject({
      selector: { app: "web" },
      ports: [{ port: 80, protocol: "TCP", targetPort: 80 }],
      type: "ClusterIP",
    });
    const clusterIP: string = service.spec.clusterIP;
    expect(clusterIP).toMatch(/^10\.(9[6-9]|10\d|11[01])\.\d+\.\d+$/);
    // The endpoints controller writes both for the new Service, with the pod's address once the
    // scheduler has bound it and the orchlet runs it and reports it Ready.
    const out = await eventually("the Endpoints and the EndpointSlice of web with the ready pod", async () => {
      const r = await cp.kubectl("-n", "svc", "get", "svc,endpoints,endpointslices");
      return r.code === 0 && /endpoints\/web\s+10\.244\./.test(r.stdout) && /IPv4\s+80\s+10\.244\./.test(r.stdout) ? r.stdout : undefined;
    });
    const blocks = out
      .trim()
      .split("\n\n")
      .map((b) => b.split("\n"));
    expect(blocks).toHaveLength(3);
    const [svc, ep, slice] = blocks as [string[], string[], string[]];
    expect(svc[0]).toMatch(/^NAME\s+TYPE\s+CLUSTER-IP\s+EXTERNAL-IP\s+PORT\(S\)\s+AGE$/);
    expect(svc[1]).toMatch(new RegExp(`^service/web\\s+ClusterIP\\s+${clusterIP.replace(/\./g, "\\.")}\\s+<none>\\s+80/TCP\\s+\\d+s$`));
    expect(ep[0]).toMatch(/^NAME\s+ENDPOINTS\s+AGE$/);
    const podIP = (await ok("-n", "svc", "get", "pods", "-l", "app=web", "-o", "jsonpath={.items[0].status.podIP}")).trim();
    expect(ep[1]).toMatch(new RegExp(`^endpoints/web\\s+${podIP.replace(/\./g, "\\.")}:80\\s+\\d+s$`));
    expect(slice[0]).toMatch(/^NAME\s+ADDRESSTYPE\s+PORTS\s+ENDPOINTS\s+AGE$/);
    expect(slice[1]).toMatch(
      new RegExp(`^endpointslice\\.discovery\\.orch\\.io/web-[a-z0-9]{5}\\s+IPv4\\s+80\\s+${podIP.replace(/\./g, "\\.")}\\s+\\d+s$`),
    );
  });
});

describe("kubectl create service", () => {
  it("creates a Service from kubectl's protobuf body, headless with --clusterip=None", async () => {
    await ok("create", "namespace", "created");
    expect(await ok("-n", "created", "create", "service", "clusterip", "api", "--tcp=80:8080")).toBe("service/api created\n");
    const api = JSON.parse(await ok("-n", "created", "get", "svc", "api", "-o", "json"));
    expect(api.spec).toMatchObject({
      type: "ClusterIP",
      selector: { app: "api" },
      ports: [{ name: "80-8080", port: 80, targetPort: 8080, protocol: "TCP" }],
    });
    expect(await ok("-n", "created", "create", "service", "clusterip", "db", "--clusterip=None")).toBe("service/db created\n");
    const db = (await ok("-n", "created", "get", "svc", "db", "--no-headers")).trim();
    expect(db).toMatch(/^db\s+ClusterIP\s+None\s+<none>\s+<none>\s+\d+s$/);
  });
});

describe("kubectl with Services under the kubernetes profile", () => {
  let kube: ControlPlane;
  beforeAll(async () => {
    kube = await startControlPlane({ ORCH_PROFILE: "kubernetes" });
  });
  afterAll(async () => {
    if (kube?.launcher.exitCode === null) await kube.stop();
  });

  it("describe finds the kubernetes Service's endpoints through its EndpointSlice (kubernetes.io/service-name)", async () => {
    const out = await kube.kubectl("describe", "service", "kubernetes");
    expect(out.stderr).toBe("");
    const port = /TargetPort:\s+(\d+)\/TCP/.exec(out.stdout)?.[1];
    expect(port).toBeDefined();
    // The host's first routable address, where the apiserver is reached.
    expect(out.stdout).toMatch(new RegExp(`\nEndpoints:\\s+\\d+\\.\\d+\\.\\d+\\.\\d+:${port}\n`));
  });
});
