// The arithmetic of deployments, without I/O: surge and unavailability, which replica set is new, how
// many replicas each gets in a step, annotations, hashing. After Kubernetes'
// pkg/controller/deployment/util/deployment_util.go and pkg/controller/controller_utils.go.
import type { Deployment, PodTemplateSpec, ReplicaSet } from "@orch/api";
import { jsonEqual } from "@orch/machinery";
import { timeOf } from "../pods.js";
import { POD_TEMPLATE_HASH_LABEL, type WellKnownNames } from "../resources.js";

/** math.MaxInt32: a progressDeadlineSeconds that means "no deadline". */
const NO_DEADLINE = 2 ** 31 - 1;
/** maxRevHistoryLengthInChars. */
const MAX_REVISION_HISTORY_CHARS = 2000;

// ---- int-or-percent ---------------------------------------------------------------------------

/**
 * intstr.GetScaledValueFromIntOrPercent: an integer as is, `N%` of `total` rounded up or down. Other
 * strings are rejected (validation lets none through).
 */
export function scaledValue(value: number | string | undefined, total: number, roundUp: boolean): number {
  if (value === undefined) return 0;
  if (typeof value === "number") return value;
  const match = /^([0-9]+)%$/.exec(value);
  if (!match) throw new Error(`invalid value for IntOrString: invalid value ${JSON.stringify(value)}: not a percentage`);
  const scaled = (Number(match[1]) * total) / 100;
  return roundUp ? Math.ceil(scaled) : Math.floor(scaled);
}

/**
 * ResolveFenceposts: surge rounds up, unavailability down; when both come to 0 unavailability becomes 1,
 * or a rollout could never make a step.
 */
export function resolveFenceposts(
  maxSurge: number | string | undefined,
  maxUnavailable: number | string | undefined,
  desired: number,
): { surge: number; unavailable: number } {
  const surge = scaledValue(maxSurge, desired, true);
  let unavailable = scaledValue(maxUnavailable, desired, false);
  if (surge === 0 && unavailable === 0) unavailable = 1;
  return { surge, unavailable };
}

export const isRollingUpdate = (d: Deployment): boolean => d.spec.strategy?.type === "RollingUpdate";
export const replicasOf = (o: Deployment | ReplicaSet): number => o.spec.replicas ?? 1;

export function maxSurge(d: Deployment): number {
  if (!isRollingUpdate(d)) return 0;
  const ru = d.spec.strategy.rollingUpdate;
  return resolveFenceposts(ru?.maxSurge, ru?.maxUnavailable, replicasOf(d)).surge;
}

export function maxUnavailable(d: Deployment): number {
  const replicas = replicasOf(d);
  if (!isRollingUpdate(d) || replicas === 0) return 0;
  const ru = d.spec.strategy.rollingUpdate;
  return Math.min(resolveFenceposts(ru?.maxSurge, ru?.maxUnavailable, replicas).unavailable, replicas);
}

// ---- replica sets --------------------------------------------------------------------------------

export const specReplicas = (rss: readonly (ReplicaSet | undefined)[]): number => rss.reduce((n, rs) => n + (rs ? replicasOf(rs) : 0), 0);
export const actualReplicas = (rss: readonly (ReplicaSet | undefined)[]): number =>
  rss.reduce((n, rs) => n + (rs?.status?.replicas ?? 0), 0);
export const readyReplicas = (rss: readonly (ReplicaSet | undefined)[]): number =>
  rss.reduce((n, rs) => n + (rs?.status?.readyReplicas ?? 0), 0);
export const availableReplicas = (rss: readonly (ReplicaSet | undefined)[]): number =>
  rss.reduce((n, rs) => n + (rs?.status?.availableReplicas ?? 0), 0);

/**
 * GetTerminatingReplicaCountForReplicaSets: the sum, or undefined while a replica set has not reported
 * the count yet (a total that leaves some out would understate it).
 */
export function terminatingReplicas(rss: readonly (ReplicaSet | undefined)[]): number | undefined {
  let total = 0;
  for (const rs of rss) {
    if (!rs) continue;
    const n = rs.status?.terminatingReplicas;
    if (n === undefined || n === null) return undefined;
    total += n;
  }
  return total;
}

/** FilterActiveReplicaSets: those asked for at least one pod. */
export const activeReplicaSets = (rss: readonly (ReplicaSet | undefined)[]): ReplicaSet[] =>
  rss.filter((rs): rs is ReplicaSet => rs !== undefined && replicasOf(rs) > 0);

const created = (rs: ReplicaSet): number => timeOf(rs.metadata.creationTimestamp) ?? 0;
const nameOf = (rs: ReplicaSet): string => rs.metadata.name ?? "";

/** ReplicaSetsByCreationTimestamp: oldest first, then by name. */
export function byCreation(a: ReplicaSet, b: ReplicaSet): number {
  return created(a) - created(b) || (nameOf(a) < nameOf(b) ? -1 : nameOf(a) > nameOf(b) ? 1 : 0);
}
/** ReplicaSetsBySizeOlder: largest first, then oldest. */
export const bySizeOlder = (a: ReplicaSet, b: ReplicaSet): number => replicasOf(b) - replicasOf(a) || byCreation(a, b);
/** ReplicaSetsBySizeNewer: largest first, then newest. */
export const bySizeNewer = (a: ReplicaSet, b: ReplicaSet): number => replicasOf(b) - replicasOf(a) || byCreation(b, a);

export function revisionOf(obj: { metadata: { annotations?: Record<string, string> } }, names: WellKnownNames): number {
  const value = obj.metadata.annotations?.[names.revision];
  if (value === undefined) return 0;
  return /^[+-]?[0-9]+$/.test(value) ? Number(value) : Number.NaN;
}

/** ReplicaSetsByRevision: lowest revision first, then oldest. */
export const byRevision =
  (names: WellKnownNames) =>
  (a: ReplicaSet, b: ReplicaSet): number =>
    (revisionOf(a, names) || 0) - (revisionOf(b, names) || 0) || byCreation(a, b);

/** MaxRevision: unparsable revisions are skipped. */
export function maxRevision(rss: readonly ReplicaSet[], names: WellKnownNames): number {
  let max = 0;
  for (const rs of rss) {
    const r = revisionOf(rs, names);
    if (Number.isFinite(r) && r > max) max = r;
  }
  return max;
}

/** A template without the pod-template-hash label, with empty maps and lists as absent (Semantic.DeepEqual). */
function comparable(template: PodTemplateSpec | undefined): unknown {
  const copy = structuredClone(template ?? {}) as PodTemplateSpec & { metadata?: { labels?: Record<string, string> } };
  if (copy.metadata?.labels) delete copy.metadata.labels[POD_TEMPLATE_HASH_LABEL];
  return withoutEmpty(copy);
}

function withoutEmpty(value: unknown): unknown {
  if (Array.isArray(value)) return value.length === 0 ? undefined : value.map(withoutEmpty);
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const kept = withoutEmpty(v);
    const emptyMap = (k === "labels" || k === "annotations") && kept !== null && typeof kept === "object" && Object.keys(kept).length === 0;
    if (kept !== undefined && kept !== null && !emptyMap) out[k] = kept;
  }
  return out;
}

/** EqualIgnoreHash: the same template apart from the pod-template-hash label. */
export function equalIgnoreHash(a: PodTemplateSpec | undefined, b: PodTemplateSpec | undefined): boolean {
  return jsonEqual(comparable(a), comparable(b));
}

/** FindNewReplicaSet: the oldest replica set whose template is the deployment's. */
export function findNewReplicaSet(d: Deployment, rss: readonly ReplicaSet[]): ReplicaSet | undefined {
  return [...rss].sort(byCreation).find((rs) => equalIgnoreHash(rs.spec.template, d.spec.template));
}

/** FindOldReplicaSets: every other one, and those of them that still have replicas. */
export function findOldReplicaSets(d: Deployment, rss: readonly ReplicaSet[]): { old: ReplicaSet[]; allOld: ReplicaSet[] } {
  const newRS = findNewReplicaSet(d, rss);
  const allOld = rss.filter((rs) => rs !== newRS);
  return { old: allOld.filter((rs) => replicasOf(rs) !== 0), allOld };
}

/** FindActiveOrLatest: the only active replica set, or the newest when none is active; none when several are. */
export function findActiveOrLatest(newRS: ReplicaSet | undefined, oldRSs: readonly ReplicaSet[]): ReplicaSet | undefined {
  if (!newRS && oldRSs.length === 0) return undefined;
  const newestFirst = [...oldRSs].sort((a, b) => byCreation(b, a));
  const active = activeReplicaSets([...newestFirst, newRS]);
  if (active.length === 0) return newRS ?? newestFirst[0];
  return active.length === 1 ? active[0] : undefined;
}

// ---- hashing -------------------------------------------------------------------------------------

/** JSON with object keys sorted: the same template always gives the same bytes. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  const entries = Object.entries(value)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
}

function fnv32a(bytes: Uint8Array, hash = 0x811c9dc5): number {
  for (const byte of bytes) hash = Math.imul(hash ^ byte, 0x01000193) >>> 0;
  return hash;
}

/** rand.SafeEncodeString's alphabet: no vowels, no confusable characters. */
const SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789";

/**
 * controller.ComputeHash: FNV-32a of the template (canonical JSON here, Go's object dump there) and,
 * when set, the collision count as 8 little-endian bytes; the decimal digits mapped to the safe alphabet.
 */
export function computeHash(template: PodTemplateSpec | undefined, collisionCount?: number): string {
  let hash = fnv32a(new TextEncoder().encode(canonicalJson(template ?? {})));
  if (collisionCount !== undefined) {
    const bytes = new Uint8Array(8);
    new DataView(bytes.buffer).setUint32(0, collisionCount >>> 0, true);
    hash = fnv32a(bytes, hash);
  }
  return [...String(hash)].map((c) => SAFE_ALPHABET[c.charCodeAt(0) % SAFE_ALPHABET.length]).join("");
}

// ---- annotations ---------------------------------------------------------------------------------

/** SetReplicasAnnotations; true when something changed. */
export function setReplicasAnnotations(rs: ReplicaSet, desired: number, max: number, names: WellKnownNames): boolean {
  const annotations = (rs.metadata.annotations ??= {});
  let changed = false;
  for (const [key, value] of [
    [names.desiredReplicas, String(desired)],
    [names.maxReplicas, String(max)],
  ] as const) {
    if (annotations[key] !== value) {
      annotations[key] = value;
      changed = true;
    }
  }
  return changed;
}

export function replicasAnnotationsNeedUpdate(rs: ReplicaSet, desired: number, max: number, names: WellKnownNames): boolean {
  const annotations = rs.metadata.annotations ?? {};
  return annotations[names.desiredReplicas] !== String(desired) || annotations[names.maxReplicas] !== String(max);
}

function intAnnotation(rs: ReplicaSet, key: string): number | undefined {
  const value = rs.metadata.annotations?.[key];
  return value !== undefined && /^[+-]?[0-9]+$/.test(value) ? Number(value) : undefined;
}

/**
 * SetNewReplicaSetAnnotations: the deployment's annotations (but the controller's own), the revision
 * (raised, never lowered; a raised one keeps the old in the revision history) and, for a replica set
 * about to be created, the replica annotations. True when something changed.
 */
export function setNewReplicaSetAnnotations(
  d: Deployment,
  rs: ReplicaSet,
  newRevision: number,
  exists: boolean,
  names: WellKnownNames,
): boolean {
  const annotations = (rs.metadata.annotations ??= {});
  let changed = false;
  for (const [k, v] of Object.entries(d.metadata.annotations ?? {})) {
    if (names.notCopiedToReplicaSets.has(k) || annotations[k] === v) continue;
    annotations[k] = v;
    changed = true;
  }
  const oldRevision = annotations[names.revision];
  let oldRevisionNumber = 0;
  if (oldRevision !== undefined && oldRevision !== "") {
    if (!/^[+-]?[0-9]+$/.test(oldRevision)) return false;
    oldRevisionNumber = Number(oldRevision);
  }
  if (oldRevisionNumber < newRevision) {
    annotations[names.revision] = String(newRevision);
    changed = true;
    if (oldRevision !== undefined) {
      const history = annotations[names.revisionHistory] ?? "";
      if (history === "") annotations[names.revisionHistory] = oldRevision;
      else {
        const revisions = history.split(",");
        let length = history.length + oldRevision.length + 1;
        let start = 0;
        while (length > MAX_REVISION_HISTORY_CHARS && start < revisions.length) length -= revisions[start++]!.length + 1;
        if (length <= MAX_REVISION_HISTORY_CHARS) annotations[names.revisionHistory] = [...revisions.slice(start), oldRevision].join(",");
      }
    }
  }
  if (!exists && setReplicasAnnotations(rs, replicasOf(d), replicasOf(d) + maxSurge(d), names)) changed = true;
  const mirror = names.kubectlRevision;
  if (mirror && annotations[names.revision] !== undefined && annotations[mirror] !== annotations[names.revision]) {
    annotations[mirror] = annotations[names.revision]!;
    changed = true;
  }
  return changed;
}

/** IsSaturated: the new replica set has, and was sized for, all the deployment's replicas. */
export function isSaturated(d: Deployment, rs: ReplicaSet | undefined, names: WellKnownNames): boolean {
  if (!rs) return false;
  const desired = intAnnotation(rs, names.desiredReplicas);
  return replicasOf(rs) === replicasOf(d) && desired === replicasOf(d);
}

// ---- scaling -------------------------------------------------------------------------------------

/**
 * NewRSNewReplicas: how big the new replica set may be now. Rolling: up to replicas + maxSurge pods in
 * all, never beyond replicas for the new one. Recreate: all at once.
 */
export function newRSNewReplicas(d: Deployment, allRSs: readonly ReplicaSet[], newRS: ReplicaSet): number {
  if (d.spec.strategy?.type === "Recreate") return replicasOf(d);
  if (!isRollingUpdate(d)) throw new Error(`deployment type ${JSON.stringify(d.spec.strategy?.type)} isn't supported`);
  const surge = scaledValue(d.spec.strategy.rollingUpdate?.maxSurge, replicasOf(d), true);
  const current = specReplicas(allRSs);
  const maxTotal = replicasOf(d) + surge;
  if (current >= maxTotal) return replicasOf(newRS);
  const scaleUp = Math.min(maxTotal - current, replicasOf(d) - replicasOf(newRS));
  return replicasOf(newRS) + scaleUp;
}

/** A replica set resized by a step: the object (with the new count) and the count. */
export interface Resize {
  rs: ReplicaSet;
  replicas: number;
}

function resized(rs: ReplicaSet, replicas: number): ReplicaSet {
  return { ...rs, spec: { ...rs.spec, replicas } };
}

/**
 * reconcileOldReplicaSets' limit: how many old pods may go now without dropping below
 * `replicas - maxUnavailable`, counting unavailable new pods as already missing.
 */
export function maxScaledDown(d: Deployment, allRSs: readonly ReplicaSet[], newRS: ReplicaSet): number {
  const minAvailable = replicasOf(d) - maxUnavailable(d);
  const newRSUnavailable = replicasOf(newRS) - (newRS.status?.availableReplicas ?? 0);
  return specReplicas(allRSs) - minAvailable - newRSUnavailable;
}

/**
 * cleanupUnhealthyReplicas: old replica sets lose their unavailable replicas first (oldest sets
 * first, at most `limit` in all): removing those costs no availability.
 */
export function cleanupUnhealthyReplicas(
  oldRSs: readonly ReplicaSet[],
  limit: number,
): { resizes: Resize[]; oldRSs: ReplicaSet[]; total: number } {
  const sorted = [...oldRSs].sort(byCreation);
  const resizes: Resize[] = [];
  let total = 0;
  for (let i = 0; i < sorted.length; i++) {
    if (total >= limit) break;
    const rs = sorted[i]!;
    const replicas = replicasOf(rs);
    const available = rs.status?.availableReplicas ?? 0;
    if (replicas === 0 || replicas === available) continue;
    const down = Math.min(limit - total, replicas - available);
    resizes.push({ rs, replicas: replicas - down });
    sorted[i] = resized(rs, replicas - down);
    total += down;
  }
  return { resizes, oldRSs: sorted, total };
}

/**
 * scaleDownOldReplicaSetsForRollingUpdate: as many old replicas as are available beyond
 * `replicas - maxUnavailable`, oldest sets first.
 */
export function scaleDownOldForRollingUpdate(
  d: Deployment,
  allRSs: readonly ReplicaSet[],
  oldRSs: readonly ReplicaSet[],
): { resizes: Resize[]; total: number } {
  const minAvailable = replicasOf(d) - maxUnavailable(d);
  const available = availableReplicas(allRSs);
  if (available <= minAvailable) return { resizes: [], total: 0 };
  const toScaleDown = available - minAvailable;
  const resizes: Resize[] = [];
  let total = 0;
  for (const rs of [...oldRSs].sort(byCreation)) {
    if (total >= toScaleDown) break;
    const replicas = replicasOf(rs);
    if (replicas === 0) continue;
    const down = Math.min(replicas, toScaleDown - total);
    resizes.push({ rs, replicas: replicas - down });
    total += down;
  }
  return { resizes, total };
}

/** getReplicaSetFraction: this set's share of a resize, from the size the deployment had when it last sized it. */
function replicaSetFraction(rs: ReplicaSet, d: Deployment, names: WellKnownNames): number {
  if (replicasOf(d) === 0) return -replicasOf(rs);
  const deploymentReplicas = replicasOf(d) + maxSurge(d);
  const annotated = intAnnotation(rs, names.maxReplicas) ?? d.status?.replicas ?? 0;
  // Go's integer.RoundToInt32: half away from zero.
  const size = (replicasOf(rs) * deploymentReplicas) / annotated;
  return Math.sign(size) * Math.round(Math.abs(size)) - replicasOf(rs);
}

/** GetReplicaSetProportion: the fraction, capped by what is left to add (or remove). */
export function replicaSetProportion(rs: ReplicaSet, d: Deployment, toAdd: number, added: number, names: WellKnownNames): number {
  if (replicasOf(rs) === 0 || toAdd === 0 || toAdd === added) return 0;
  const fraction = replicaSetFraction(rs, d, names);
  const allowed = toAdd - added;
  return toAdd > 0 ? Math.min(fraction, allowed) : Math.max(fraction, allowed);
}

/**
 * The proportional part of `scale`: a deployment resized while several replica sets are active spreads
 * the difference over them by their share, leftovers to the largest. Returns the sizes to set.
 */
export function proportionalSizes(
  d: Deployment,
  newRS: ReplicaSet | undefined,
  oldRSs: readonly ReplicaSet[],
  names: WellKnownNames,
): Resize[] {
  const all = activeReplicaSets([...oldRSs, newRS]);
  const allowed = replicasOf(d) > 0 ? replicasOf(d) + maxSurge(d) : 0;
  const toAdd = allowed - specReplicas(all);
  if (toAdd > 0) all.sort(bySizeNewer);
  else if (toAdd < 0) all.sort(bySizeOlder);
  let added = 0;
  const sizes = all.map((rs) => {
    if (toAdd === 0) return replicasOf(rs);
    const proportion = replicaSetProportion(rs, d, toAdd, added, names);
    added += proportion;
    return replicasOf(rs) + proportion;
  });
  if (toAdd !== 0 && sizes.length > 0) sizes[0] = Math.max(0, sizes[0]! + toAdd - added);
  return all.map((rs, i) => ({ rs, replicas: sizes[i]! }));
}

// ---- progress ------------------------------------------------------------------------------------

export const hasProgressDeadline = (d: Deployment): boolean =>
  d.spec.progressDeadlineSeconds !== undefined && d.spec.progressDeadlineSeconds !== NO_DEADLINE;

export const hasRevisionHistoryLimit = (d: Deployment): boolean =>
  d.spec.revisionHistoryLimit !== undefined && d.spec.revisionHistoryLimit !== NO_DEADLINE;
