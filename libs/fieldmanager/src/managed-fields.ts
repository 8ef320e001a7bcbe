// metadata.managedFields as the Kubernetes API server keeps it (k8s.io/apimachinery/pkg/util/managedfields
// and its internal package): entries are decoded into field sets per manager identifier, updated by an
// Update or an Apply, capped, stripped of server-owned metadata, and encoded back, sorted.
import {
  type FieldError,
  type FieldPath,
  type Shape,
  type StatusError,
  cloneJson,
  failure,
  fieldError,
  goQuote,
  rfc3339,
} from "@orch/machinery";
import { type Path, type PathElement, pathText } from "./path.js";
import { FieldSet } from "./set.js";
import { ShapeError, compare, identical } from "./typed.js";
import { type IgnoreFilter, type ManagedSets, Conflicts, apply, update } from "./updater.js";

export interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  apiVersion?: string;
  time?: string;
  fieldsType?: string;
  /** FieldsV1 JSON (see `FieldSet.toFieldsV1`). */
  fieldsV1?: unknown;
  subresource?: string;
}

export type Operation = "Apply" | "Update";

/** The field sets of an object's managers, and when each last changed something. */
export interface Managed {
  sets: ManagedSets;
  times: Map<string, string | undefined>;
}

/** An object as far as field management reads it. */
export interface ManagedObject {
  apiVersion?: string;
  kind?: string;
  metadata?: { managedFields?: readonly ManagedFieldsEntry[] | null; annotations?: Record<string, string> | null; [k: string]: unknown };
  [k: string]: unknown;
}

/** Who writes, through which endpoint, at which version. */
export interface WriteIntent {
  /** The fieldManager, or what `managerOrUserAgent` made of the user agent. */
  manager: string;
  /** The version the request was served at (`apps/v1`). */
  apiVersion: string;
  /** `status`, `scale`...; absent on the main endpoint. */
  subresource?: string;
  now?: Date;
}

/** Kubernetes' DefaultMaxUpdateManagers: older Update entries are merged into one per version beyond it. */
export const MAX_UPDATE_MANAGERS = 10;
/** The manager the oldest Update entries are merged into. */
export const ANCIENT_CHANGES_MANAGER = "ancient-changes";
export const FIELD_MANAGER_MAX_LENGTH = 128;
export const LAST_APPLIED_ANNOTATION = "kubectl.kubernetes.io/last-applied-configuration";

export class ManagedFieldsError extends Error {}

/** BuildManagerIdentifier: the entry without fields and time; appliers without apiVersion. */
export function managerIdentifier(entry: Pick<ManagedFieldsEntry, "manager" | "operation" | "apiVersion" | "subresource">): string {
  const id: ManagedFieldsEntry = {};
  if (entry.manager) id.manager = entry.manager;
  if (entry.operation) id.operation = entry.operation;
  if (entry.apiVersion && entry.operation !== "Apply") id.apiVersion = entry.apiVersion;
  if (entry.subresource) id.subresource = entry.subresource;
  return JSON.stringify(id);
}

const parseIdentifier = (id: string): ManagedFieldsEntry => JSON.parse(id) as ManagedFieldsEntry;

/**
 * DecodeManagedFields: throws on an entry Kubernetes would not decode. `stored`: entries of a stored
 * object, which this server encoded: a write reuses their JSON for every manager it did not touch (a
 * pod's status write changes one entry of several). A request's own entries may be written otherwise
 * and are encoded again, as Kubernetes does.
 */
export function decodeManagedFields(entries: readonly ManagedFieldsEntry[] | null | undefined, stored = false): Managed {
  const managed: Managed = { sets: new Map(), times: new Map() };
  (entries ?? []).forEach((entry, i) => {
    if (entry.operation !== "Apply" && entry.operation !== "Update") {
      throw new ManagedFieldsError("operation must be `Apply` or `Update`");
    }
    if (!entry.apiVersion) throw new ManagedFieldsError("apiVersion must not be empty");
    if (entry.fieldsType !== "FieldsV1") {
      throw new ManagedFieldsError(
        entry.fieldsType
          ? `invalid fieldsType "${entry.fieldsType}" in managed fields entry ${i}`
          : `missing fieldsType in managed fields entry ${i}`,
      );
    }
    const id = managerIdentifier(entry);
    let set: FieldSet;
    try {
      set = FieldSet.fromFieldsV1(entry.fieldsV1 ?? {}, stored);
    } catch (e) {
      throw new ManagedFieldsError(`error decoding versioned set: ${(e as Error).message}`);
    }
    managed.sets.set(id, { set, apiVersion: entry.apiVersion, applied: entry.operation === "Apply" });
    managed.times.set(id, entry.time);
  });
  return managed;
}

const seconds = (t: string | undefined) => (t ? Math.floor(Date.parse(t) / 1000) : 0);

/** encodeManagedFields, sorted as sortEncodedManagedFields: operation, time, manager, apiVersion, subresource. */
export function encodeManagedFields(managed: Managed): ManagedFieldsEntry[] | undefined {
  if (managed.sets.size === 0) return undefined;
  const entries: ManagedFieldsEntry[] = [];
  for (const [id, versioned] of managed.sets) {
    const who = parseIdentifier(id);
    const time = managed.times.get(id);
    // Members assigned in the order Kubernetes writes them (no spread of optional parts: each made an object).
    const entry: ManagedFieldsEntry = {};
    if (who.manager) entry.manager = who.manager;
    entry.operation = versioned.applied ? "Apply" : (who.operation ?? "Update");
    entry.apiVersion = versioned.apiVersion;
    if (time) entry.time = time;
    entry.fieldsType = "FieldsV1";
    entry.fieldsV1 = versioned.set.toFieldsV1();
    if (who.subresource) entry.subresource = who.subresource;
    entries.push(entry);
  }
  const cmp = (a = "", b = "") => (a < b ? -1 : a > b ? 1 : 0);
  return entries.sort(
    (p, q) =>
      cmp(p.operation, q.operation) ||
      seconds(p.time) - seconds(q.time) ||
      cmp(p.manager, q.manager) ||
      cmp(p.apiVersion, q.apiVersion) ||
      cmp(p.subresource, q.subresource),
  );
}

/** Fields the server owns, never a manager (stripmeta.go). */
const SERVER_OWNED = FieldSet.of(
  ...[
    ["apiVersion"],
    ["kind"],
    ["metadata"],
    ["metadata", "name"],
    ["metadata", "namespace"],
    ["metadata", "creationTimestamp"],
    ["metadata", "selfLink"],
    ["metadata", "uid"],
    ["metadata", "clusterName"],
    ["metadata", "generation"],
    ["metadata", "managedFields"],
    ["metadata", "resourceVersion"],
  ].map((p): Path => p.map((field) => ({ field }))),
);

function stripServerOwned(managed: Managed, id: string): void {
  const versioned = managed.sets.get(id);
  if (!versioned) return;
  const set = versioned.set.difference(SERVER_OWNED);
  if (set.empty()) managed.sets.delete(id);
  else managed.sets.set(id, { ...versioned, set });
}

/** capManagersManager: beyond the cap, the oldest Update entries merge into `ancient-changes` per version. */
export function capUpdateManagers(managed: Managed, max = MAX_UPDATE_MANAGERS): void {
  const updaters = [...managed.sets].filter(([, v]) => !v.applied).map(([id]) => id);
  if (updaters.length <= max) return;
  updaters.sort((a, b) => seconds(managed.times.get(a)) - seconds(managed.times.get(b)) || (a < b ? -1 : a > b ? 1 : 0));
  const firstOfVersion = new Map<string, string>();
  let length = updaters.length;
  for (let i = 0; i < updaters.length && length > max; i++) {
    const id = updaters[i]!;
    const versioned = managed.sets.get(id)!;
    const version = versioned.apiVersion;
    const bucket = managerIdentifier({ manager: ANCIENT_CHANGES_MANAGER, operation: "Update", apiVersion: version });
    const first = firstOfVersion.get(version);
    if (first === undefined) {
      firstOfVersion.set(version, id);
      continue;
    }
    if (!managed.sets.has(bucket)) {
      managed.sets.set(bucket, managed.sets.get(first)!);
      managed.sets.delete(first);
      managed.times.delete(first);
    }
    const merged = managed.sets.get(bucket)!;
    managed.sets.set(bucket, { ...versioned, set: versioned.set.union(merged.set) });
    managed.sets.delete(id);
    managed.times.set(bucket, managed.times.get(id));
    managed.times.delete(id);
    length--;
  }
}

/** isResetManagedFields: `[]` or `[{}]` in a request clears managedFields. */
function isReset(entries: readonly ManagedFieldsEntry[] | null | undefined): boolean {
  if (!entries) return false;
  if (entries.length === 0) return true;
  return entries.length === 1 && Object.keys(entries[0] ?? {}).length === 0;
}

function decodeOrEmpty(entries: readonly ManagedFieldsEntry[] | null | undefined, stored = false): Managed {
  try {
    return decodeManagedFields(entries, stored);
  } catch {
    return { sets: new Map(), times: new Map() };
  }
}

/** decodeLiveOrNew: the request's own managedFields win when valid, except through a subresource. */
function managedForUpdate(live: ManagedObject | undefined, next: ManagedObject, subresource: string | undefined): Managed {
  const liveEntries = live?.metadata?.managedFields;
  if (subresource) return decodeOrEmpty(liveEntries, true);
  const requested = next.metadata?.managedFields;
  if (isReset(requested)) return { sets: new Map(), times: new Map() };
  try {
    const managed = decodeManagedFields(requested);
    if (managed.sets.size > 0) return managed;
  } catch {
    // Invalid entries in a request fall back to the live object's, as in Kubernetes.
  }
  return decodeOrEmpty(liveEntries, true);
}

/**
 * The object without managedFields, as field management compares objects (it only reads the answer).
 * An object whose metadata has none is answered as it is: a create's never has.
 */
function withoutManagedFields(obj: ManagedObject | undefined): ManagedObject {
  if (!obj) return {};
  const meta = obj.metadata;
  if (typeof meta === "object" && meta !== null && !Object.hasOwn(meta, "managedFields")) return obj;
  const { managedFields: _m, ...metadata } = meta ?? {};
  return { ...obj, metadata };
}

function setManagedFields(obj: ManagedObject, managed: Managed): void {
  const entries = encodeManagedFields(managed);
  obj.metadata ??= {};
  if (entries) obj.metadata.managedFields = entries;
  else delete obj.metadata.managedFields;
}

const CURRENT_OPERATION = "current-operation";

/** buildManagerInfo: the identifier of this write's entry ("unknown" when nameless). */
const identifierOf = (intent: WriteIntent, operation: Operation) =>
  managerIdentifier({
    manager: intent.manager || "unknown",
    operation,
    apiVersion: intent.apiVersion,
    ...(intent.subresource ? { subresource: intent.subresource } : {}),
  });

/**
 * FieldManager.Update: records that `intent.manager` turned `live` (undefined on create) into `next`,
 * setting `next.metadata.managedFields`. `ignore` drops the paths the endpoint's strategy resets.
 */
export function updateManagedFields(
  live: ManagedObject | undefined,
  next: ManagedObject,
  shape: Shape,
  intent: WriteIntent,
  ignore?: IgnoreFilter,
): void {
  const managed = managedForUpdate(live, next, intent.subresource);
  const id = identifierOf(intent, "Update");
  try {
    update(withoutManagedFields(live), withoutManagedFields(next), shape, intent.apiVersion, managed.sets, CURRENT_OPERATION, ignore);
  } catch (e) {
    // UpdateNoErrors: a value that does not fit its shape keeps the live entries rather than failing the write.
    if (!(e instanceof ShapeError)) throw e;
    next.metadata ??= {};
    if (live?.metadata?.managedFields) next.metadata.managedFields = live.metadata.managedFields;
    else delete next.metadata.managedFields;
    return;
  }
  stripServerOwned(managed, CURRENT_OPERATION);
  const current = managed.sets.get(CURRENT_OPERATION);
  if (current) {
    // The write changed something: it joins the manager's earlier Update fields and dates the entry.
    managed.sets.delete(CURRENT_OPERATION);
    const previous = managed.sets.get(id);
    managed.sets.set(id, previous ? { ...current, set: current.set.union(previous.set) } : current);
    managed.times.set(id, rfc3339(intent.now));
  }
  capUpdateManagers(managed);
  setManagedFields(next, managed);
}

export interface ApplyOptions extends WriteIntent {
  force: boolean;
  /** `apiVersion` and `kind` the configuration must name. */
  kind: string;
  /** Whether the kind has a status subresource (its main endpoint then cannot apply status). */
  hasStatusSubresource?: boolean;
}

/**
 * FieldManager.Apply: merges an applied configuration into `live` (an empty object when there is none
 * yet) for `intent.manager`. Answers the new object with its managedFields; throws a 409 StatusError
 * on conflicts (unless forced) and a 400 on a configuration Kubernetes refuses.
 */
export function applyConfiguration(
  live: ManagedObject | undefined,
  config: ManagedObject,
  shape: Shape,
  options: ApplyOptions,
): ManagedObject {
  if (config.apiVersion !== options.apiVersion || config.kind !== options.kind) {
    throw failure(400, "BadRequest", `invalid object type: ${gvkText(config.apiVersion, config.kind)}`);
  }
  if (config.metadata?.managedFields != null) throw failure(400, "BadRequest", "metadata.managedFields must be nil");
  let managed: Managed;
  try {
    managed = decodeManagedFields(live?.metadata?.managedFields, true);
  } catch (e) {
    throw failure(500, "InternalError", `failed to decode managed fields: ${(e as Error).message}`);
  }
  const id = identifierOf(options, "Apply");
  const base = withoutManagedFields(live);
  let result: unknown;
  try {
    const ignore = endpointResetFields(options.subresource, options.hasStatusSubresource ?? false);
    result = apply(base, config, shape, options.apiVersion, managed.sets, id, options.force, ignore);
  } catch (e) {
    if (e instanceof Conflicts) throw conflictError(e);
    if (e instanceof ShapeError) throw failure(400, "BadRequest", `failed to create typed patch object: ${e.message}`);
    throw e;
  }
  stripServerOwned(managed, id);
  const object = (result ?? cloneJson(base)) as ManagedObject;
  if (result !== undefined) managed.times.set(id, rfc3339(options.now));
  capUpdateManagers(managed);
  // lastAppliedUpdater: kubectl's server-side apply keeps a client-side apply annotation in step.
  if (options.manager === "kubectl" && live?.metadata?.annotations?.[LAST_APPLIED_ANNOTATION] !== undefined) {
    object.metadata ??= {};
    object.metadata.annotations = { ...object.metadata.annotations, [LAST_APPLIED_ANNOTATION]: lastApplied(config) };
  }
  setManagedFields(object, managed);
  return object;
}

function lastApplied(config: ManagedObject): string {
  const copy = cloneJson(config);
  const annotations = copy.metadata?.annotations;
  if (annotations) {
    delete annotations[LAST_APPLIED_ANNOTATION];
    if (Object.keys(annotations).length === 0) delete copy.metadata!.annotations;
  }
  return JSON.stringify(copy);
}

/** GroupVersionKind.String: `apps/v1, Kind=Deployment`, `/v1, Kind=Pod`. */
function gvkText(apiVersion: string | undefined, kind: string | undefined): string {
  const v = apiVersion ?? "";
  const [group, version] = v.includes("/") ? [v.slice(0, v.indexOf("/")), v.slice(v.indexOf("/") + 1)] : ["", v];
  return `${group}/${version}, Kind=${kind ?? ""}`;
}

/** printManager: `"mgr"`, `"mgr" with subresource "status"`, `"mgr" using apps/v1`. */
function printManager(id: string): string {
  let who: ManagedFieldsEntry;
  try {
    who = parseIdentifier(id);
  } catch {
    return goQuote(id);
  }
  let text = goQuote(who.manager ?? "");
  if (who.subresource) text += ` with subresource ${goQuote(who.subresource)}`;
  if (who.operation === "Update") return `${text} using ${who.apiVersion ?? ""}`;
  return text;
}

/** NewConflictError: 409 naming each field and its manager. */
export function conflictError(conflicts: Conflicts): StatusError {
  const list = conflicts.conflicts;
  const causes = list.map((c) => ({
    reason: "FieldManagerConflict",
    message: `conflict with ${printManager(c.manager)}`,
    field: pathText(c.path),
  }));
  let message: string;
  if (list.length === 1) {
    message = `Apply failed with 1 conflict: conflict with ${printManager(list[0]!.manager)}: ${pathText(list[0]!.path)}`;
  } else {
    const byManager = new Map<string, string[]>();
    for (const c of list) byManager.set(c.manager, [...(byManager.get(c.manager) ?? []), pathText(c.path)]);
    const lines: string[] = [];
    for (const manager of [...byManager.keys()].sort()) {
      lines.push(`conflicts with ${printManager(manager)}:`);
      for (const p of byManager.get(manager)!) lines.push(`- ${p}`);
    }
    message = `Apply failed with ${list.length} conflicts: ${lines.join("\n")}`;
  }
  return failure(409, "Conflict", message, { causes });
}

const isStatus = (pe: PathElement) => "field" in pe && pe.field === "status";

/**
 * What an endpoint cannot write, so its writers neither own nor conflict on it (the strategies' reset
 * fields): everything but `status` through /status; `status` through the main endpoint of a kind that
 * has a status subresource.
 */
export function endpointResetFields(subresource: string | undefined, hasStatusSubresource: boolean): IgnoreFilter | undefined {
  if (subresource === "status") return (set) => set.select(isStatus);
  if (!subresource && hasStatusSubresource) return (set) => set.select((pe) => !isStatus(pe));
  return undefined;
}

/**
 * The paths a strategy changed between the object a request proposed and the one it stores, beyond
 * the endpoint's own reset fields: server-set and normalised fields are nobody's doing.
 */
function strategyResetFields(
  proposed: ManagedObject,
  stored: ManagedObject,
  shape: Shape,
  endpoint: IgnoreFilter | undefined,
): IgnoreFilter {
  const before = withoutManagedFields(proposed);
  const after = withoutManagedFields(stored);
  // Most strategies change nothing a create proposes: then no path changed, found without building sets.
  if (identical(before, after)) return endpoint ?? ((set) => set);
  const c = compare(before, after, shape);
  const changed = c.added.union(c.modified).union(c.removed);
  return (set) => (endpoint ? endpoint(set) : set).difference(changed);
}

/**
 * The one hook of the write path: after the endpoint's strategy prepared `next` from what the request
 * `proposed`, records the write in `next.metadata.managedFields`. An Apply's entries were computed
 * when merging; only the fields the strategy reset are taken back from the applier.
 */
export function recordWrite(
  live: ManagedObject | undefined,
  proposed: ManagedObject,
  next: ManagedObject,
  shape: Shape,
  intent: WriteIntent & { operation: Operation; hasStatusSubresource: boolean },
): void {
  const operation = intent.operation;
  const ignore = strategyResetFields(proposed, next, shape, endpointResetFields(intent.subresource, intent.hasStatusSubresource));
  if (operation === "Update") {
    const tracked = { ...proposed, metadata: { ...proposed.metadata } };
    updateManagedFields(live, tracked, shape, intent, ignore);
    next.metadata ??= {};
    if (tracked.metadata.managedFields) next.metadata.managedFields = tracked.metadata.managedFields;
    else delete next.metadata.managedFields;
    return;
  }
  const managed = decodeOrEmpty(proposed.metadata?.managedFields);
  const id = identifierOf(intent, "Apply");
  const applier = managed.sets.get(id);
  if (applier) {
    const set = ignore(applier.set);
    if (set.empty()) managed.sets.delete(id);
    else managed.sets.set(id, { ...applier, set });
  }
  setManagedFields(next, managed);
}

/** managerOrUserAgent: the fieldManager, else the user agent up to its first `/`, printable, ≤ 128 bytes. */
export function managerOrUserAgent(fieldManager: string | undefined, userAgent: string | undefined): string {
  if (fieldManager) return fieldManager;
  let out = "";
  let bytes = 0;
  for (const ch of (userAgent ?? "").split("/")[0] ?? "") {
    if (!isGoPrintable(ch.codePointAt(0) ?? 0)) continue;
    const size = Buffer.byteLength(ch, "utf8");
    if (bytes + size > FIELD_MANAGER_MAX_LENGTH) break;
    out += ch;
    bytes += size;
  }
  return out;
}

/** ValidateFieldManager: at most 128 bytes, all printable. */
export function validateFieldManager(fieldManager: string, path: string | FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (Buffer.byteLength(fieldManager, "utf8") > FIELD_MANAGER_MAX_LENGTH) {
    errs.push(fieldError.tooLong(path, fieldManager, FIELD_MANAGER_MAX_LENGTH));
  }
  for (const ch of fieldManager) {
    const cp = ch.codePointAt(0) ?? 0;
    // Go's %#U of a non-printable rune: U+ and at least four hex digits.
    if (!isGoPrintable(cp))
      errs.push(fieldError.invalid(path, fieldManager, `invalid character U+${cp.toString(16).toUpperCase().padStart(4, "0")}`));
  }
  return errs;
}

/** Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space. */
function isGoPrintable(cp: number): boolean {
  if (cp < 0x80) return cp >= 0x20 && cp < 0x7f;
  return /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u.test(String.fromCodePoint(cp));
}
