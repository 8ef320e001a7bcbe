// The pure parts of the deployment controller, on Kubernetes' own documented cases
// (deployment_util.go's comments and tests, rolling.go's worked example, the proportional-scaling
// example of the Deployment documentation).
import type { Deployment, Pod, ReplicaSet } from "@orch/api";
import { namingProfile } from "@orch/api";
import { describe, expect, it } from "vitest";
import {
  calculateStatus,
  cleanupUnhealthyReplicas,
  computeHash,
  equalIgnoreHash,
  findNewReplicaSet,
  maxScaledDown,
  maxSurge,
  maxUnavailable,
  newRSNewReplicas,
  podsToDelete,
  proportionalSizes,
  resolveFenceposts,
  rolloutStatus,
  scaleDownOldForRollingUpdate,
  setCondition,
  setNewReplicaSetAnnotations,
  wellKnownNames,
} from "../src/index.js";

const names = wellKnownNames(namingProfile("kubernetes"));
const NOW = Date.parse("2025-01-01T12:00:00Z");
const at = (ms: number) => `${new Date(ms).toISOString().slice(0, 19)}Z`;

function deploymentOf(
  replicas: number,
  strategy: Deployment["spec"]["strategy"] = { type: "RollingUpdate", rollingUpdate: { maxSurge: "25%", maxUnavailable: "25%" } },
): Deployment {
  return {
    metadata: { name: "web", namespace: "ns", uid: "d-uid", generation: 1 },
    spec: {
      replicas,
      selector: { matchLabels: { app: "web" } },
      template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "c", image: "nginx:1" }] } },
      strategy,
      revisionHistoryLimit: 10,
      progressDeadlineSeconds: 600,
    },
    status: {},
  } as unknown as Deployment;
}

function rs(
  name: string,
  replicas: number,
  available = replicas,
  created = "2025-01-01T00:00:00Z",
  annotations: Record<string, string> = {},
): ReplicaSet {
  return {
    metadata: { name, namespace: "ns", uid: `${name}-uid`, creationTimestamp: created, generation: 1, annotations },
    spec: { replicas, template: { metadata: { labels: { app: "web", "pod-template-hash": name } } } },
    status: { replicas, availableReplicas: available, readyReplicas: available, observedGeneration: 1 },
  } as unknown as ReplicaSet;
}

describe("surge and unavailability (ResolveFenceposts)", () => {
  it("resolves Kubernetes' test table: percentages of 10, absent values, and never 0/0", () => {
    expect(resolveFenceposts(0, 0, 0)).toEqual({ surge: 0, unavailable: 1 });
    expect(resolveFenceposts("39%", "39%", 10)).toEqual({ surge: 4, unavailable: 3 });
    expect(resolveFenceposts(undefined, "39%", 10)).toEqual({ surge: 0, unavailable: 3 });
    expect(resolveFenceposts("39%", undefined, 10)).toEqual({ surge: 4, unavailable: 0 });
    expect(resolveFenceposts(undefined, undefined, 10)).toEqual({ surge: 0, unavailable: 1 });
    expect(() => resolveFenceposts("oops", "39%", 10)).toThrow(/invalid value for IntOrString/);
    expect(() => resolveFenceposts("55%", "urg", 10)).toThrow(/invalid value for IntOrString/);
  });

  it("follows the doc comment's cases: 1% unavailable rounds to 0 and 1% surge up to 1", () => {
    expect(resolveFenceposts("0%", "1%", 2)).toEqual({ surge: 0, unavailable: 1 });
    expect(resolveFenceposts("1%", "25%", 2)).toEqual({ surge: 1, unavailable: 0 });
    expect(resolveFenceposts("1%", "0%", 1)).toEqual({ surge: 1, unavailable: 0 });
  });

  it("the default 25%/25% of 4 replicas is 1 and 1; maxUnavailable never exceeds replicas; Recreate has neither", () => {
    expect([maxSurge(deploymentOf(4)), maxUnavailable(deploymentOf(4))]).toEqual([1, 1]);
    expect(maxUnavailable(deploymentOf(2, { type: "RollingUpdate", rollingUpdate: { maxSurge: 0, maxUnavailable: 5 } }))).toBe(2);
    expect(maxUnavailable(deploymentOf(0))).toBe(0);
    expect([maxSurge(deploymentOf(4, { type: "Recreate" })), maxUnavailable(deploymentOf(4, { type: "Recreate" }))]).toEqual([0, 0]);
  });
});

describe("a rolling update step", () => {
  it("NewRSNewReplicas: Kubernetes' table (can not scale up, scale up to replicas, recreate)", () => {
    const strategy = (surge: number) => ({ type: "RollingUpdate", rollingUpdate: { maxSurge: surge, maxUnavailable: 1 } });
    const other = rs("other", 5);
    expect(newRSNewReplicas(deploymentOf(1, strategy(1)), [other], rs("new", 5))).toBe(5);
    expect(newRSNewReplicas(deploymentOf(6, strategy(10)), [other], rs("new", 2))).toBe(6);
    expect(newRSNewReplicas(deploymentOf(3, { type: "Recreate" }), [other], rs("new", 1))).toBe(3);
  });

  it("rolling.go's example: 10 replicas, maxSurge 3, maxUnavailable 2 — new to 3, old to 8, new to 5", () => {
    const d = deploymentOf(10, { type: "RollingUpdate", rollingUpdate: { maxSurge: 3, maxUnavailable: 2 } });
    const old = rs("old", 10);
    let fresh = rs("new", 0, 0, "2025-01-01T01:00:00Z");
    fresh = { ...fresh, spec: { ...fresh.spec, replicas: newRSNewReplicas(d, [old, fresh], fresh) } };
    expect(fresh.spec.replicas).toBe(3);

    const all = [old, fresh];
    expect(maxScaledDown(d, all, fresh)).toBe(13 - 8 - 3);
    // The new pods are not available yet; the old ones all are: nothing to clean up, 2 to scale down.
    const cleanup = cleanupUnhealthyReplicas([old], 2);
    expect(cleanup.total).toBe(0);
    const down = scaleDownOldForRollingUpdate(d, [...cleanup.oldRSs, fresh], cleanup.oldRSs);
    expect(down.resizes.map((r) => [r.rs.metadata.name, r.replicas])).toEqual([["old", 8]]);

    const old8 = rs("old", 8);
    expect(newRSNewReplicas(d, [old8, fresh], fresh)).toBe(5);
  });

  it("rolling.go's case 1: new pods that never become available block any further scale-down", () => {
    const d = deploymentOf(10, { type: "RollingUpdate", rollingUpdate: { maxSurge: 3, maxUnavailable: 2 } });
    const fresh = rs("new", 5, 0, "2025-01-01T01:00:00Z");
    const old = rs("old", 8, 7);
    expect(maxScaledDown(d, [old, fresh], fresh)).toBe(0);
  });

  it("unhealthy old replicas go first, oldest replica set first, within the limit", () => {
    const older = rs("older", 3, 1, "2025-01-01T00:00:00Z");
    const old = rs("old", 3, 2, "2025-01-01T00:30:00Z");
    const cleanup = cleanupUnhealthyReplicas([old, older], 2);
    expect(cleanup.resizes.map((r) => [r.rs.metadata.name, r.replicas])).toEqual([["older", 1]]);
    expect(cleanup.total).toBe(2);
  });

  it("proportional scaling, the documentation's example: 8 old + 5 new scaled from 10 to 15 become 11 + 7", () => {
    const d = deploymentOf(15, { type: "RollingUpdate", rollingUpdate: { maxSurge: 3, maxUnavailable: 2 } });
    const annotations = { [names.desiredReplicas]: "10", [names.maxReplicas]: "13" };
    const old = rs("old", 8, 8, "2025-01-01T00:00:00Z", annotations);
    const fresh = rs("new", 5, 0, "2025-01-01T01:00:00Z", annotations);
    const sizes = proportionalSizes(d, fresh, [old], names);
    expect(Object.fromEntries(sizes.map((s) => [s.rs.metadata.name, s.replicas]))).toEqual({ old: 11, new: 7 });
  });
});

describe("replica sets of a deployment", () => {
  it("the template hash is stable, ignores key order, and changes with the template and the collision count", () => {
    const d = deploymentOf(1);
    const hash = computeHash(d.spec.template);
    expect(hash).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]{1,10}$/);
    expect(computeHash(JSON.parse(JSON.stringify(d.spec.template)))).toBe(hash);
    const reordered = { spec: d.spec.template.spec, metadata: d.spec.template.metadata } as Deployment["spec"]["template"];
    expect(computeHash(reordered)).toBe(hash);
    expect(computeHash(d.spec.template, 0)).not.toBe(hash);
    expect(computeHash(d.spec.template, 1)).not.toBe(computeHash(d.spec.template, 0));
    const changed = structuredClone(d.spec.template);
    changed.spec!.containers[0]!.image = "nginx:2";
    expect(computeHash(changed)).not.toBe(hash);
  });

  it("the new replica set is the oldest one with the deployment's template, ignoring pod-template-hash", () => {
    const d = deploymentOf(1);
    const mine = (name: string, created: string) => {
      const r = rs(name, 1, 1, created);
      r.spec.template = {
        metadata: { labels: { app: "web", "pod-template-hash": name } },
        spec: structuredClone(d.spec.template.spec),
      } as ReplicaSet["spec"]["template"];
      return r;
    };
    const other = rs("other", 1);
    expect(equalIgnoreHash(mine("a", "2025-01-01T00:00:00Z").spec.template, d.spec.template)).toBe(true);
    expect(findNewReplicaSet(d, [other, mine("b", "2025-01-01T02:00:00Z"), mine("a", "2025-01-01T01:00:00Z")])?.metadata.name).toBe("a");
    expect(findNewReplicaSet(d, [other])).toBeUndefined();
  });

  it("annotations: the deployment's are copied (not the controller's own); revisions only go up, the old one kept in the history", () => {
    const d = deploymentOf(4);
    d.metadata.annotations = { team: "a", [names.revision]: "7" };
    const created = rs("new", 0);
    created.metadata.annotations = {};
    expect(setNewReplicaSetAnnotations(d, created, 3, false, names)).toBe(true);
    expect(created.metadata.annotations).toEqual({
      team: "a",
      [names.revision]: "3",
      [names.desiredReplicas]: "4",
      [names.maxReplicas]: "5",
    });
    expect(setNewReplicaSetAnnotations(d, created, 3, true, names)).toBe(false);
    expect(setNewReplicaSetAnnotations(d, created, 2, true, names)).toBe(false);
    expect(setNewReplicaSetAnnotations(d, created, 5, true, names)).toBe(true);
    expect(created.metadata.annotations?.[names.revisionHistory]).toBe("3");
    expect(names.revision).toBe("deployment.kubernetes.io/revision");
    expect(wellKnownNames(namingProfile("orch")).revision).toBe("deployment.orch.io/revision");
  });
});

describe("conditions", () => {
  it("Available: MinimumReplicasAvailable at replicas - maxUnavailable available, else MinimumReplicasUnavailable", () => {
    const d = deploymentOf(4);
    const some = rs("new", 4, 3);
    expect(calculateStatus([some], some, d, NOW).conditions).toEqual([
      {
        type: "Available",
        status: "True",
        reason: "MinimumReplicasAvailable",
        message: "Deployment has minimum availability.",
        lastUpdateTime: at(NOW),
        lastTransitionTime: at(NOW),
      },
    ]);
    const few = rs("new", 4, 2);
    const status = calculateStatus([few], few, d, NOW);
    expect(status).toMatchObject({
      observedGeneration: 1,
      replicas: 4,
      updatedReplicas: 4,
      readyReplicas: 2,
      availableReplicas: 2,
      unavailableReplicas: 2,
    });
    expect(status.conditions?.[0]).toMatchObject({
      status: "False",
      reason: "MinimumReplicasUnavailable",
      message: "Deployment does not have minimum availability.",
    });
  });

  it("setCondition keeps lastTransitionTime when only the reason changes, and changes nothing for the same status and reason", () => {
    const status: NonNullable<Deployment["status"]> = {};
    setCondition(status, {
      type: "Progressing",
      status: "True",
      reason: "NewReplicaSetCreated",
      message: "a",
      lastUpdateTime: at(NOW),
      lastTransitionTime: at(NOW),
    });
    setCondition(status, {
      type: "Progressing",
      status: "True",
      reason: "NewReplicaSetCreated",
      message: "b",
      lastUpdateTime: at(NOW + 5000),
      lastTransitionTime: at(NOW + 5000),
    });
    expect(status.conditions?.[0]?.message).toBe("a");
    setCondition(status, {
      type: "Progressing",
      status: "True",
      reason: "ReplicaSetUpdated",
      message: "c",
      lastUpdateTime: at(NOW + 9000),
      lastTransitionTime: at(NOW + 9000),
    });
    expect(status.conditions?.[0]).toMatchObject({
      reason: "ReplicaSetUpdated",
      lastUpdateTime: at(NOW + 9000),
      lastTransitionTime: at(NOW),
    });
    setCondition(status, {
      type: "Progressing",
      status: "False",
      reason: "ProgressDeadlineExceeded",
      message: "d",
      lastUpdateTime: at(NOW + 9000),
      lastTransitionTime: at(NOW + 9000),
    });
    expect(status.conditions?.[0]).toMatchObject({ status: "False", lastTransitionTime: at(NOW + 9000) });
  });

  it("Progressing: ReplicaSetUpdated while pods move, NewReplicaSetAvailable when complete, ProgressDeadlineExceeded after the deadline", () => {
    const d = deploymentOf(2);
    const created = at(NOW - 60_000);
    d.status = {
      replicas: 2,
      updatedReplicas: 1,
      availableReplicas: 1,
      observedGeneration: 1,
      conditions: [
        {
          type: "Progressing",
          status: "True",
          reason: "NewReplicaSetCreated",
          message: 'Created new replica set "web-new"',
          lastUpdateTime: created,
          lastTransitionTime: created,
        },
      ],
    };
    const old = rs("web-old", 1, 1);
    const fresh = rs("web-new", 2, 1, "2025-01-01T01:00:00Z");
    fresh.status.replicas = 2;
    const moving = rolloutStatus([old, fresh], fresh, d, NOW);
    expect(moving.conditions?.find((c) => c.type === "Progressing")).toEqual({
      type: "Progressing",
      status: "True",
      reason: "ReplicaSetUpdated",
      message: 'ReplicaSet "web-new" is progressing.',
      lastUpdateTime: at(NOW),
      lastTransitionTime: created,
    });

    const done = rs("web-new", 2, 2, "2025-01-01T01:00:00Z");
    const complete = rolloutStatus([rs("web-old", 0, 0), done], done, d, NOW);
    expect(complete.conditions?.find((c) => c.type === "Progressing")).toMatchObject({
      status: "True",
      reason: "NewReplicaSetAvailable",
      message: 'ReplicaSet "web-new" has successfully progressed.',
    });

    // Nothing moved since the last status, and the last progress is older than progressDeadlineSeconds.
    const stuck = structuredClone(d);
    stuck.status = {
      ...moving,
      conditions: moving.conditions?.map((c) => (c.type === "Progressing" ? { ...c, lastUpdateTime: at(NOW - 601_000) } : c)),
    };
    const late = rolloutStatus([old, fresh], fresh, stuck, NOW);
    expect(late.conditions?.find((c) => c.type === "Progressing")).toMatchObject({
      status: "False",
      reason: "ProgressDeadlineExceeded",
      message: 'ReplicaSet "web-new" has timed out progressing.',
    });
  });
});

describe("which pods go on scale-down", () => {
  const pod = (name: string, ready: boolean, created: number): Pod =>
    ({
      metadata: { name, uid: name, creationTimestamp: at(created) },
      spec: { containers: [] },
      status: {
        phase: ready ? "Running" : "Pending",
        conditions: ready ? [{ type: "Ready", status: "True", lastTransitionTime: at(created) }] : [],
      },
    }) as unknown as Pod;

  it("not ready first, then the newest", () => {
    const oldReady = pod("old-ready", true, NOW - 10 * 86_400_000);
    const newReady = pod("new-ready", true, NOW - 1000);
    const notReady = pod("not-ready", false, NOW - 20 * 86_400_000);
    const all = [oldReady, newReady, notReady];
    expect(podsToDelete(all, all, 1, names.podDeletionCost, NOW).map((p) => p.metadata.name)).toEqual(["not-ready"]);
    expect(podsToDelete(all, all, 2, names.podDeletionCost, NOW).map((p) => p.metadata.name)).toEqual(["not-ready", "new-ready"]);
  });

  it("a lower pod-deletion-cost goes before a higher one", () => {
    const cheap = pod("cheap", true, NOW - 10 * 86_400_000);
    cheap.metadata.annotations = { [names.podDeletionCost]: "-5" };
    const dear = pod("dear", true, NOW - 1000);
    expect(podsToDelete([dear, cheap], [dear, cheap], 1, names.podDeletionCost, NOW).map((p) => p.metadata.name)).toEqual(["cheap"]);
  });
});
