// Who waits for whom: Kubernetes' suggested FlowSchemas and PriorityLevelConfigurations, cut to what orch
// has (k8s.io/apiserver pkg/apis/flowcontrol/bootstrap). They are fixed here, not served as API objects:
// the numbers that matter are settings (ORCH_MAX_REQUESTS_INFLIGHT and the others, see config.ts).
import type { NamingProfile } from "@orch/api";
import type { UserInfo } from "@orch/registry";
import { CONTROLLER_APPS, controllerUser } from "../authz/bootstrap-policy.js";
import type { ResourceRequest } from "../http/request-info.js";
import type { BudgetOptions } from "./concurrency-budget.js";

export interface FlowControlConfig {
  /** Kubernetes' --max-requests-inflight; with the next, the seats of all limited levels (watches only until their stream starts). */
  maxRequestsInflight: number;
  /** Kubernetes' --max-mutating-requests-inflight; APF, as here, adds it to the above into one budget. */
  maxMutatingRequestsInflight: number;
  /** Requests one user may have waiting for a seat in its priority level (Kubernetes' queueLengthLimit). */
  queueLengthLimit: number;
  /** Watches open at once, all users (exempt ones included). */
  maxWatches: number;
  /** Watches one user may have open at once (exempt users: no limit). */
  maxWatchesPerUser: number;
}

export const flowControlDefaults: FlowControlConfig = {
  maxRequestsInflight: 400,
  maxMutatingRequestsInflight: 200,
  queueLengthLimit: 50,
  maxWatches: 10_000,
  maxWatchesPerUser: 1_000,
};

/**
 * Kubernetes' default queues per level (128): with `queueLengthLimit` per queue, what a whole level may
 * have waiting. Here a flow has one queue of its own, so this only bounds the level's total.
 */
const QUEUES_PER_LEVEL = 128;

export interface PriorityLevel {
  name: string;
  /** Sent as X-Kubernetes-PF-PriorityLevel-UID; fixed, since the level is no API object. */
  uid: string;
  /** Kubernetes' nominalConcurrencyShares; undefined for the exempt level. */
  shares?: number;
  /** Kubernetes' lendablePercent: the part of the level's nominal seats others may borrow. */
  lendablePercent?: number;
}

type LevelKey = "exempt" | "leaderElection" | "workloadHigh" | "workloadLow" | "globalDefault";

export const PRIORITY_LEVELS: Readonly<Record<LevelKey, PriorityLevel>> = {
  exempt: { name: "exempt", uid: "69347edf-4295-4755-a953-3481d25225d6" },
  leaderElection: { name: "leader-election", uid: "0ef34a3b-978b-4820-9ac5-848e8ad4498f", shares: 10, lendablePercent: 0 },
  workloadHigh: { name: "workload-high", uid: "d87b8c72-5b6a-4dcc-a9b2-10b0cff05999", shares: 40, lendablePercent: 50 },
  workloadLow: { name: "workload-low", uid: "1da46cb3-c37f-40b2-8107-a9541c101e24", shares: 100, lendablePercent: 90 },
  globalDefault: { name: "global-default", uid: "93a53cb5-2339-40ca-917b-8c233722659d", shares: 20, lendablePercent: 50 },
};

export interface FlowSchema {
  name: string;
  /** Sent as X-Kubernetes-PF-FlowSchema-UID; fixed, since the schema is no API object. */
  uid: string;
  level: PriorityLevel;
}

const SCHEMAS: Readonly<Record<"exempt" | "leaderElection" | "controllers" | "serviceAccounts" | "globalDefault", FlowSchema>> = {
  exempt: { name: "exempt", uid: "4e919ef3-72f8-48a4-bbea-8e000b784cc3", level: PRIORITY_LEVELS.exempt },
  leaderElection: { name: "system-leader-election", uid: "51e19859-18f9-452e-a6cb-e9603f55109e", level: PRIORITY_LEVELS.leaderElection },
  controllers: { name: "orch-controllers", uid: "0efdd467-5ef3-4c36-8100-c3c1d439988c", level: PRIORITY_LEVELS.workloadHigh },
  serviceAccounts: { name: "service-accounts", uid: "92c4c06d-e451-476c-a3cf-b68e45906046", level: PRIORITY_LEVELS.workloadLow },
  globalDefault: { name: "global-default", uid: "b39ff03a-879a-434d-8fba-54401967fe24", level: PRIORITY_LEVELS.globalDefault },
};

export const FLOW_SCHEMAS: readonly FlowSchema[] = Object.values(SCHEMAS);

const CONTROLLER_USERS = new Set<string>(CONTROLLER_APPS.map(controllerUser));
const LEADER_ELECTION_VERBS = new Set(["get", "create", "update"]);

/**
 * The first schema that matches, in Kubernetes' matching precedence: `system:masters` is exempt; orch's
 * controllers renewing their leases, then anything else they do; service accounts; everyone else.
 * Every schema distinguishes flows by user.
 */
export function classify(user: UserInfo, info: ResourceRequest | undefined, profile: NamingProfile): FlowSchema {
  if (user.groups.includes("system:masters")) return SCHEMAS.exempt;
  if (CONTROLLER_USERS.has(user.username)) {
    const leases = info?.resource === "leases" && info.group === profile.group("coordination");
    return leases && LEADER_ELECTION_VERBS.has(info.verb) ? SCHEMAS.leaderElection : SCHEMAS.controllers;
  }
  if (user.groups.includes("system:serviceaccounts")) return SCHEMAS.serviceAccounts;
  return SCHEMAS.globalDefault;
}

/**
 * The budget of the limited levels. A level's nominal seats are its part of the total by shares, as
 * Kubernetes computes them; what it may not lend (100 − lendablePercent) is guaranteed to it, rounded
 * down so that the guarantees never exceed the total; the rest is the pool.
 */
export function budgetOptions(config: FlowControlConfig, queueWaitMs: number): BudgetOptions {
  const totalSeats = config.maxRequestsInflight + config.maxMutatingRequestsInflight;
  const limited = Object.values(PRIORITY_LEVELS).flatMap(({ name, shares, lendablePercent = 0 }) =>
    shares === undefined ? [] : [{ name, shares, lendablePercent }],
  );
  const allShares = limited.reduce((sum, l) => sum + l.shares, 0);
  return {
    totalSeats,
    levels: limited.map((l) => ({
      name: l.name,
      shares: l.shares,
      guaranteedSeats: Math.floor(((totalSeats * l.shares) / allShares) * ((100 - l.lendablePercent) / 100)),
    })),
    flowQueueLimit: config.queueLengthLimit,
    levelQueueLimit: config.queueLengthLimit * QUEUES_PER_LEVEL,
    queueWaitMs,
  };
}
