// Every `kubectl rollout` command with the real kubectl 1.32, against the control plane as `npm start`
// runs it, under both naming profiles: a 10-replica Deployment becomes Available, an image change rolls
// out within maxSurge/maxUnavailable at every revision a watch sees, history and undo (kubectl restores
// the old template client-side, by a JSON patch), pause, resume and restart, a rollout whose pods never
// get ready ends in ProgressDeadlineExceeded, and `kubectl describe` shows the controllers' events.
// Nobody marks anything by hand: the scheduler binds the pods to the orchlet's simulated nodes, which
// run them and report them Ready.
import type { Deployment, Pod, ReplicaSet } from "@orch/api";
import { ApiClient, type KubeObject, type ResourceRef } from "@orch/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ControlPlane, kubectlOk, startControlPlane } from "./control-plane.js";

const replicaSets: ResourceRef = { group: "apps", version: "v1", plural: "replicasets", namespaced: true };
const deployments: ResourceRef = { group: "apps", version: "v1", plural: "deployments", namespaced: true };
const pods: ResourceRef = { group: "", version: "v1", plural: "pods", namespaced: true };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each(["orch", "kubernetes"])("kubectl rollout under the %s profile", (profile) => {
  let cp: ControlPlane;
  let client: ApiClient;
  /** The orchlet's failure injection: a pod with this annotation (from its template) never gets ready. */
  const simulate = `${profile === "orch" ? "orch.io" : "kubernetes.io"}/orchlet-simulate`;
  beforeAll(async () => {
    // npm start's control plane with its three simulated nodes; containers ready 100 ms after they start,
    // and stopped in the default second, long enough for the Deployment to count them as terminating.
    cp = await startControlPlane({ ORCH_PROFILE: profile, ORCH_POD_READY_DELAY_MS: "100" });
    client = ApiClient.fromKubeconfig(cp.kubeconfig, { userAgent: "rollout-test" });
  });
  afterAll(async () => {
    client?.close();
    await cp?.stop();
  });

  const kubectl = (...args: string[]) => kubectlOk(cp, ...args);
  /** `kubectl get <what> -o jsonpath=<path>`; `what` is split on spaces (`"pods -l app=web"`). */
  const jsonpath = async (what: string, path: string) => kubectl("get", ...what.split(" "), "-o", `jsonpath=${path}`);
  const rolledOut = async (name: string) =>
    expect(await kubectl("rollout", "status", `deployment/${name}`, "--timeout=60s")).toContain(
      `deployment "${name}" successfully rolled out`,
    );

  /**
   * The images of `app`'s pods once exactly `count` remain: `rollout status` reports success when the new
   * pods are available, while old ones may still be terminating for their grace period.
   */
  async function podsOf(app: string, count: number): Promise<{ names: string[]; images: string[] }> {
    for (;;) {
      const names = (await jsonpath(`pods -l app=${app}`, "{.items[*].metadata.name}")).split(" ").filter(Boolean);
      if (names.length === count) {
        const images = (await jsonpath(`pods -l app=${app}`, "{.items[*].spec.containers[0].image}")).split(" ");
        if (images.length === count) return { names, images };
      }
      await sleep(100);
    }
  }

  /** The replica sets of `app`, as `kubectl rollout history` numbers them. */
  async function revisions(app: string): Promise<string[]> {
    const out = await jsonpath(`rs -l app=${app}`, "{.items[*].metadata.annotations.deployment\\.kubernetes\\.io/revision}");
    return out.split(" ").filter(Boolean).sort();
  }

  /** Until the controller has seen the last spec change (it reports observedGeneration after acting on it). */
  async function observed(name: string): Promise<Deployment> {
    for (;;) {
      const d = await client.get<Deployment>(deployments, name, { namespace: "default" });
      if ((d.status?.observedGeneration ?? 0) >= (d.metadata.generation ?? 0)) return d;
      await sleep(50);
    }
  }

  it("a 10-replica Deployment becomes Available; rollout status says so", async () => {
    await kubectl("create", "deployment", "web", "--image=nginx:1.27", "--replicas=10");
    await rolledOut("web");
    expect(await jsonpath("deployment web", "{.status.readyReplicas}/{.status.availableReplicas}/{.status.updatedReplicas}")).toBe(
      "10/10/10",
    );
    expect(await jsonpath("deployment web", '{.status.conditions[?(@.type=="Available")].status}')).toBe("True");
    // Bound by the scheduler to the simulated nodes, which gave each an address and started it.
    const placed = (await jsonpath("pods -l app=web", "{range .items[*]}{.spec.nodeName} {.status.podIP} {.status.phase}{'\\n'}{end}"))
      .trim()
      .split("\n");
    expect(placed).toHaveLength(10);
    for (const line of placed) expect(line).toMatch(/^node-[012] 10\.244\.[012]\.\d+ Running$/);
    expect(await jsonpath("deployment web", '{.status.conditions[?(@.type=="Progressing")].reason}')).toBe("NewReplicaSetAvailable");
    expect(await revisions("web")).toEqual(["1"]);
    // The revision under the profile's own name and under kubectl's.
    const annotations = JSON.parse(await jsonpath("deployment web", "{.metadata.annotations}"));
    expect(await kubectl("rollout", "status", "deployment/web", "--revision=1")).toContain('deployment "web" successfully rolled out');
    expect(annotations).toMatchObject({
      "deployment.kubernetes.io/revision": "1",
      [`deployment.${profile === "orch" ? "orch.io" : "kubernetes.io"}/revision`]: "1",
    });
  });

  it("an image change rolls out within maxSurge and maxUnavailable at every revision a watch sees", async () => {
    // rolling.go's example: 10 replicas, at most 13 asked for, at least 8 ready.
    await kubectl("patch", "deployment", "web", "-p", '{"spec":{"strategy":{"rollingUpdate":{"maxSurge":3,"maxUnavailable":2}}}}');
    const web = (o: KubeObject) => o.metadata?.labels?.app === "web";
    const seen = { maxAskedFor: 0, minReady: Number.POSITIVE_INFINITY, rsRevisions: 0, podRevisions: 0 };
    const violations: string[] = [];
    const stopRS = await follow<ReplicaSet>(client, replicaSets, (rss) => {
      const asked = rss.filter(web).reduce((n, rs) => n + (rs.spec.replicas ?? 0), 0);
      seen.maxAskedFor = Math.max(seen.maxAskedFor, asked);
      seen.rsRevisions++;
      if (asked > 13) violations.push(`replica sets ask for ${asked} pods (> 10 + maxSurge 3)`);
    });
    const stopPods = await follow<Pod>(client, pods, (ps) => {
      const ready = ps
        .filter(web)
        .filter(
          (p) => !p.metadata.deletionTimestamp && p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"),
        ).length;
      seen.minReady = Math.min(seen.minReady, ready);
      seen.podRevisions++;
      if (ready < 8) violations.push(`${ready} ready pods (< 10 - maxUnavailable 2)`);
    });
    // Old pods take their grace period to go: the Deployment counts them meanwhile.
    let maxTerminating = 0;
    const stopDeployments = await follow<Deployment>(client, deployments, (ds) => {
      for (const d of ds.filter((x) => x.metadata.name === "web"))
        maxTerminating = Math.max(maxTerminating, d.status?.terminatingReplicas ?? 0);
    });
    await kubectl("set", "image", "deployment/web", "nginx=nginx:1.28");
    await rolledOut("web");
    await stopRS();
    await stopPods();
    await stopDeployments();
    expect(maxTerminating).toBeGreaterThan(0);
    if (process.env.ORCH_ROLLOUT_FIGURES) console.log(JSON.stringify({ profile, ...seen, maxTerminating }));
    expect(violations).toEqual([]);
    // The watch saw the rollout in steps: the surge was used, and pods were replaced one batch at a time.
    expect(seen.maxAskedFor).toBeGreaterThan(10);
    expect(seen.minReady).toBeGreaterThanOrEqual(8);
    expect(await revisions("web")).toEqual(["1", "2"]);
    expect((await podsOf("web", 10)).images).toEqual(Array(10).fill("nginx:1.28"));
  });

  it("rollout history lists the revisions with their change causes; --revision shows a template", async () => {
    // kubectl reads the change cause from kubernetes.io/change-cause, which the deployment's replica set inherits.
    // As Kubernetes' documentation does it: the annotation after the change, when the new replica set
    // exists (set before, it would land on the replica set of the revision then current).
    await kubectl("set", "image", "deployment/web", "nginx=nginx:1.29");
    await kubectl("annotate", "deployment/web", "kubernetes.io/change-cause=nginx 1.29");
    await rolledOut("web");
    const history = await kubectl("rollout", "history", "deployment/web");
    const rows = history
      .split("\n")
      .filter((l) => /^\d/.test(l))
      .map((l) => l.split(/\s{2,}/));
    expect(rows).toEqual([
      ["1", "<none>"],
      ["2", "<none>"],
      ["3", "nginx 1.29"],
    ]);
    expect(await kubectl("rollout", "history", "deployment/web", "--revision=1")).toMatch(/Image:\s+nginx:1\.27/);
  });

  it("rollout undo restores the previous template, then --to-revision any older one", async () => {
    expect((await kubectl("rollout", "undo", "deployment/web")).trim()).toBe("deployment.apps/web rolled back");
    await rolledOut("web");
    expect(await jsonpath("deployment web", "{.spec.template.spec.containers[0].image}")).toBe("nginx:1.28");
    // Revision 2's replica set serves again, as revision 4.
    expect(await revisions("web")).toEqual(["1", "3", "4"]);
    expect((await podsOf("web", 10)).images).toEqual(Array(10).fill("nginx:1.28"));

    expect((await kubectl("rollout", "undo", "deployment/web", "--to-revision=1")).trim()).toBe("deployment.apps/web rolled back");
    await rolledOut("web");
    expect(await jsonpath("deployment web", "{.spec.template.spec.containers[0].image}")).toBe("nginx:1.27");
    expect(await revisions("web")).toEqual(["3", "4", "5"]);
    const skipped = await kubectl("rollout", "undo", "deployment/web", "--to-revision=5");
    expect(skipped.trim()).toBe("deployment.apps/web skipped rollback (current template already matches revision 5)");
    const missing = await cp.kubectl("rollout", "undo", "deployment/web", "--to-revision=2");
    expect([missing.code, missing.stderr.trim()]).toEqual([1, "error: unable to find specified revision 2 in history"]);
    // The annotations kubectl copied back from the replica set are the user's, not the controller's.
    const annotations = JSON.parse(await jsonpath("deployment web", "{.metadata.annotations}"));
    expect(Object.keys(annotations).filter((k) => /desired-replicas|max-replicas|revision-history/.test(k))).toEqual([]);
  });

  it("pause holds a template change back, undo and restart refuse a paused deployment, resume rolls it out", async () => {
    expect((await kubectl("rollout", "pause", "deployment/web")).trim()).toBe("deployment.apps/web paused");
    await kubectl("set", "image", "deployment/web", "nginx=nginx:1.30");
    const paused = await observed("web");
    expect(paused.status?.conditions?.find((c) => c.type === "Progressing")).toMatchObject({
      status: "Unknown",
      reason: "DeploymentPaused",
    });
    expect(await revisions("web")).toEqual(["3", "4", "5"]);
    expect(await kubectl("rollout", "status", "deployment/web", "--watch=false")).toContain(
      'Waiting for deployment "web" rollout to finish: 0 out of 10 new replicas have been updated...',
    );

    const undo = await cp.kubectl("rollout", "undo", "deployment/web");
    expect([undo.code, undo.stderr.trim()]).toEqual([
      1,
      "error: you cannot rollback a paused deployment; resume it first with 'kubectl rollout resume' and try again",
    ]);
    const restart = await cp.kubectl("rollout", "restart", "deployment/web");
    expect(restart.code).toBe(1);
    expect(restart.stderr).toContain("can't restart paused deployment (run rollout resume first)");

    expect((await kubectl("rollout", "resume", "deployment/web")).trim()).toBe("deployment.apps/web resumed");
    await rolledOut("web");
    expect((await podsOf("web", 10)).images).toEqual(Array(10).fill("nginx:1.30"));
    expect(await revisions("web")).toEqual(["3", "4", "5", "6"]);
  });

  it("restart replaces every pod with the same template plus restartedAt; revisionHistoryLimit prunes old revisions", async () => {
    await kubectl("patch", "deployment", "web", "-p", '{"spec":{"revisionHistoryLimit":2}}');
    const before = new Set((await podsOf("web", 10)).names);
    expect((await kubectl("rollout", "restart", "deployment/web")).trim()).toBe("deployment.apps/web restarted");
    await rolledOut("web");
    expect(await jsonpath("deployment web", "{.spec.template.metadata.annotations}")).toContain("kubectl.kubernetes.io/restartedAt");
    const after = (await podsOf("web", 10)).names;
    expect(after).toHaveLength(10);
    expect(after.filter((p) => before.has(p))).toEqual([]);
    // The newest revision and the 2 before it are kept; older, scaled-down replica sets are deleted.
    for (let i = 0; (await revisions("web")).length > 3 && i < 100; i++) await sleep(100);
    expect(await revisions("web")).toEqual(["5", "6", "7"]);
    expect(await jsonpath("deployment web", "{.spec.template.spec.containers[0].image}")).toBe("nginx:1.30");
  });

  it("kubectl describe deployment and kubectl get events show the controllers' events", async () => {
    const describe = await kubectl("describe", "deployment", "web");
    const events = describe.slice(describe.indexOf("Events:"));
    expect(events).toMatch(/Normal\s+ScalingReplicaSet\s+.*\s+deployment-controller\s+Scaled up replica set web-\w+ from 0 to 10\n/);
    expect(events).toMatch(/Normal\s+ScalingReplicaSet\s+.*\s+deployment-controller\s+Scaled down replica set web-\w+ from 10 to 8\n/);
    const newRS = /^NewReplicaSet:\s+(web-\w+) \(10\/10 replicas created\)$/m.exec(describe)?.[1];
    expect(newRS).toBeDefined();

    const rsEvents = await kubectl("describe", "rs", newRS!);
    // Ten pods: nine events, then the tenth and later combined into one, as client-go's recorder does.
    expect(rsEvents.match(/Normal\s+SuccessfulCreate\s+.*replicaset-controller\s+Created pod: web-\w+-\w+\n/g)).toHaveLength(9);
    expect(rsEvents).toMatch(
      /Normal\s+SuccessfulCreate\s+.*replicaset-controller\s+\(combined from similar events\): Created pod: web-\w+-\w+\n/,
    );

    const table = await kubectl("get", "events", "--field-selector", "involvedObject.kind=Deployment,involvedObject.name=web");
    expect(table.split("\n")[0]).toMatch(/^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE$/);
    expect(table).toMatch(/Normal\s+ScalingReplicaSet\s+deployment\/web\s+Scaled up replica set web-\w+ from 0 to 10/);
  });

  it("a rollout whose pods never become ready ends in ProgressDeadlineExceeded; rollout status fails with kubectl's message", async () => {
    await kubectl("create", "deployment", "stuck", "--image=nginx:1.27", "--replicas=2");
    await rolledOut("stuck");
    await kubectl(
      "patch",
      "deployment",
      "stuck",
      "-p",
      JSON.stringify({
        spec: {
          progressDeadlineSeconds: 3,
          template: {
            metadata: { annotations: { [simulate]: "never-ready" } },
            spec: { containers: [{ name: "nginx", image: "nginx:broken" }] },
          },
        },
      }),
    );
    const status = await cp.kubectl("rollout", "status", "deployment/stuck", "--timeout=60s");
    expect(status.code).toBe(1);
    expect(status.stderr.trim()).toBe('error: deployment "stuck" exceeded its progress deadline');
    const progressing = JSON.parse(await jsonpath("deployment stuck", '{.status.conditions[?(@.type=="Progressing")]}'));
    const newRS = await jsonpath(
      "rs -l app=stuck",
      '{.items[?(@.metadata.annotations.deployment\\.kubernetes\\.io/revision=="2")].metadata.name}',
    );
    expect(progressing).toMatchObject({
      status: "False",
      reason: "ProgressDeadlineExceeded",
      message: `ReplicaSet "${newRS}" has timed out progressing.`,
    });
    // The old pods stayed: availability held while the new ones never became ready.
    expect(await jsonpath("deployment stuck", '{.status.availableReplicas}/{.status.conditions[?(@.type=="Available")].status}')).toBe(
      "2/True",
    );
    // Undo brings the working template back and the rollout completes again.
    await kubectl("rollout", "undo", "deployment/stuck");
    await rolledOut("stuck");
    expect(await jsonpath("deployment stuck", '{.status.conditions[?(@.type=="Progressing")].reason}')).toBe("NewReplicaSetAvailable");
  });

  it("kubectl explain knows status.terminatingReplicas", async () => {
    expect(await kubectl("explain", "deployment.status.terminatingReplicas")).toMatch(/FIELD:\s+terminatingReplicas <integer>/);
    expect(await kubectl("explain", "replicaset.status.terminatingReplicas")).toMatch(/FIELD:\s+terminatingReplicas <integer>/);
  });
});

/**
 * Lists the namespace's objects, then watches from the list's revision, calling `check` with all of them
 * after every change: an invariant checked at each revision, not at sampled moments. Returns the stop.
 */
async function follow<T extends KubeObject>(
  client: ApiClient,
  ref: ResourceRef,
  check: (objects: T[]) => void,
): Promise<() => Promise<void>> {
  const listed = await client.list<T>(ref, { namespace: "default" });
  const objects = new Map(listed.items.map((o) => [o.metadata?.name ?? "", o]));
  check([...objects.values()]);
  const stream = client.watch<T>(ref, { namespace: "default", resourceVersion: listed.metadata.resourceVersion });
  const running = (async () => {
    for await (const event of stream) {
      if (event.type === "BOOKMARK") continue;
      const name = event.object.metadata?.name ?? "";
      if (event.type === "DELETED") objects.delete(name);
      else objects.set(name, event.object);
      check([...objects.values()]);
    }
  })();
  return async () => {
    stream.close();
    await running;
  };
}
