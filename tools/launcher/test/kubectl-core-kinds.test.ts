// The real kubectl with the core kinds every client assumes: ConfigMaps made from files and literals,
// and Events listed by `kubectl get events` and `kubectl events` as Kubernetes prints them.
import { writeFile } from "node:fs/promises";
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

describe("kubectl with ConfigMaps and Events", () => {
  it("lists both Event versions and ConfigMaps in api-resources", async () => {
    const lines = (await ok("api-resources", "--no-headers")).split("\n").map((l) => l.split(/\s+/));
    const rows = lines.map(([name, short, apiVersion]) => `${name} ${short} ${apiVersion}`);
    expect(rows).toEqual(expect.arrayContaining(["configmaps cm v1", "events ev v1", "events ev events.orch.io/v1"]));
  });

  it("creates a ConfigMap --from-file and --from-literal, and prints NAME, DATA, AGE", async () => {
    await ok("create", "namespace", "cm");
    const file = `${cp.dataDir}/app.properties`;
    await writeFile(file, "color=blue\nsize=3\n");
    expect(await ok("-n", "cm", "create", "configmap", "settings", `--from-file=${file}`, "--from-literal=mode=fast")).toBe(
      "configmap/settings created\n",
    );
    const stored = JSON.parse(await ok("-n", "cm", "get", "configmap", "settings", "-o", "json"));
    expect(stored.data).toEqual({ "app.properties": "color=blue\nsize=3\n", mode: "fast" });
    const table = (await ok("-n", "cm", "get", "configmaps")).split("\n");
    expect(table[0]).toMatch(/^NAME\s+DATA\s+AGE$/);
    // Beside the cluster CA every namespace holds (orch-root-ca.crt), sorted by name.
    expect(table[1]).toMatch(/^orch-root-ca\.crt\s+1\s+\d+s$/);
    expect(table[2]).toMatch(/^settings\s+2\s+\d+s$/);
  });

  it("prints events with LAST SEEN, TYPE, REASON, OBJECT, MESSAGE", async () => {
    await ok("create", "namespace", "ev");
    const path = `${cp.dataDir}/event.yaml`;
    const now = new Date().toISOString().replace(/\.\d+Z$/, "Z");
    await writeFile(
      path,
      `apiVersion: v1
kind: Event
metadata: {name: web.1, namespace: ev}
involvedObject: {kind: Pod, namespace: ev, name: web}
reason: Started
message: Started container web
source: {component: kubelet}
firstTimestamp: "${now}"
lastTimestamp: "${now}"
count: 1
type: Normal
`,
    );
    await ok("create", "-f", path);
    // The server's table prints the kind in lower case; `kubectl events` prints its own rows with the kind as is.
    const printed: [string[], string][] = [
      [["get", "events"], "pod/web"],
      [["get", "events.v1.events.orch.io"], "pod/web"],
      [["events"], "Pod/web"],
    ];
    for (const [args, object] of printed) {
      const lines = (await ok("-n", "ev", ...args)).trim().split("\n");
      expect(lines[0]).toMatch(/^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE$/);
      expect(lines[1]).toMatch(new RegExp(`^\\d+s\\s+Normal\\s+Started\\s+${object}\\s+Started container web$`));
    }
  });
});
