// The one generic store. Every kind, built-in or custom, is served by this code with its own
// declaration and strategy plugged in, in Kubernetes' fixed order:
// decode → system metadata → prepare → validate → warnings → generation → persist.
import { type AnySchema, type ObjectHeader, Scale, decodeWith, pruneUnknown } from "@orch/api";
import {
  type FieldError,
  StatusError,
  cloneJson,
  errors,
  failure,
  fieldError,
  generateName,
  jsonEqual,
  rfc3339,
  success,
  type Status,
} from "@orch/machinery";
import {
  type Change,
  CompactedError,
  KeyExistsError,
  KeyNotFoundError,
  MAX_OBJECT_BYTES,
  ObjectTooLargeError,
  type ObjectKey,
  RevisionConflictError,
  type Storage,
  type StoredObject,
  keyText,
} from "@orch/storage";
import { recordWrite } from "@orch/fieldmanager";
import { randomUUID } from "node:crypto";
import {
  type ClusterReader,
  type KindDefinition,
  type RequestContext,
  type Strategy,
  type SubresourceStrategy,
  type VersionConverter,
  apiVersionOf,
  kindShape,
  specFields,
  storageResource,
} from "./kind.js";
import { validateMetaForCreate, validateMetaForUpdate } from "./meta-validation.js";
import type { NamespacePhases } from "./namespace-phases.js";
import { readPath, writePath } from "./json-path.js";
import { type ListOptions, type ListPlan, planList } from "./list-options.js";
import { type WatchEvent, type WatchHub, Watcher } from "./watch.js";
import { type AdmissionAttributes, type AdmissionHook, type AdmissionOperation, forbiddenByAdmission } from "./admission.js";

export type FieldValidation = "Ignore" | "Warn" | "Strict";

export interface WriteOptions {
  dryRun?: boolean;
  fieldValidation?: FieldValidation;
  /**
   * Who writes, as recorded in `metadata.managedFields` (the request's fieldManager, else its user
   * agent's first segment). Without one, managedFields are carried over unchanged.
   */
  fieldManager?: string;
  /** A server-side apply: the object's managedFields come from the apply, and a missing object is created. */
  apply?: boolean;
}

/** A parsed request body, with the duplicate keys its JSON/YAML text had. */
export interface Body {
  value: unknown;
  duplicates?: readonly string[];
}

export interface DeleteOptions {
  gracePeriodSeconds?: number;
  propagationPolicy?: string;
  orphanDependents?: boolean;
  preconditions?: { uid?: string; resourceVersion?: string };
}

export interface WriteResult {
  object: ObjectHeader;
  /** 201 for a create, 200 otherwise. */
  code: 200 | 201;
  /** `object` as JSON, when the write already made it (the object was stored as it is served). */
  text?: string;
}

/** What the generic store answers a completed delete with: a Success Status without `code`, as Kubernetes'. */
export type DeletedStatus = Omit<Status, "code">;

export type DeleteResult = { code: 200 | 202; body: ObjectHeader | DeletedStatus };

export interface ListResponse {
  items: StoredObject[];
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
}

export interface WatchRequest extends ListOptions {
  allowWatchBookmarks?: boolean;
  sendInitialEvents?: boolean;
}

/** Unknown or duplicate fields under fieldValidation=Strict; PATCH reports them differently from create/update. */
export class StrictDecodingError extends StatusError {
  constructor(
    status: Status,
    readonly problems: readonly string[],
  ) {
    super(status);
  }
}

export interface StoreDeps {
  storage: Storage;
  hub: WatchHub;
  /** Namespace phases from commits; without it a create reads its namespace from storage. */
  namespaces?: NamespacePhases;
  /** Other kinds' objects, for strategies' `admit` rules. */
  cluster?: ClusterReader;
  /** Admission webhooks (the apiserver's); without it writes are admitted by the strategies alone. */
  admission?: AdmissionHook;
}

const NAMESPACES: ObjectKey = { resource: "core/namespaces", namespace: "", name: "" };
/** Kubernetes' maxNameGenerationCreateAttempts. */
const MAX_NAME_GENERATION_ATTEMPTS = 8;
/** How often a conflicting delete is retried. */
const MAX_RETRIES = 8;

/** Over the storage's object limit: a 413 (etcd-backed Kubernetes answers a 500 "request is too large"). */
const objectTooLarge = (e: ObjectTooLargeError) => errors.tooLarge(`the object is ${e.bytes} bytes, limit is ${MAX_OBJECT_BYTES}`);

const parse = (s: Pick<StoredObject, "value">): ObjectHeader => JSON.parse(s.value) as ObjectHeader;
const clone = cloneJson;
/** A request whose deadline passed writes nothing: its answer (504) is already gone. */
const deadlineCheck = (ctx: RequestContext) => (ctx.throwIfAborted ? ctx.throwIfAborted() : ctx.signal?.throwIfAborted());

/** Whether an update leaves what generation tracks unchanged (the spec, or the kind's equivalent). */
function specEqual(kind: KindDefinition, a: ObjectHeader, b: ObjectHeader): boolean {
  const source = kind.strategy.generationSource ?? specFields;
  return jsonEqual(source(a), source(b));
}

/** Equal apart from resourceVersion: such an update is a no-op, as in Kubernetes. */
function sameObject(a: ObjectHeader, b: ObjectHeader): boolean {
  const strip = (o: ObjectHeader) => ({ ...o, metadata: { ...o.metadata, resourceVersion: undefined } });
  return jsonEqual(strip(a), strip(b));
}

/** The event every unfiltered watcher gets for a change: built once, shared by all of them. */
let lastPlain: { change: Change; event: WatchEvent } | undefined;
function plainEvent(change: Change): WatchEvent {
  if (lastPlain?.change !== change) lastPlain = { change, event: { type: change.type, object: change.value, revision: change.revision } };
  return lastPlain.event;
}

export class ResourceStore {
  constructor(
    readonly kind: KindDefinition,
    private readonly deps: StoreDeps,
  ) {}

  private get gr() {
    return { group: this.kind.group, resource: this.kind.plural };
  }
  private get gk() {
    return { group: this.kind.group, kind: this.kind.kind };
  }

  key(namespace: string, name: string): ObjectKey {
    return { resource: storageResource(this.kind), namespace: this.kind.namespaced ? namespace : "", name };
  }

  /** The newest committed revision this process has seen. */
  currentRevision(): number {
    return this.deps.hub.revision;
  }

  /** Whether stored text differs from what this kind serves (another version, or another kind's storage). */
  private get converts(): boolean {
    return !!(this.kind.storageApiVersion || this.kind.storedAs || this.kind.defaultsOnRead);
  }

  /**
   * Stored text as the served version shows it: only `apiVersion` differs between versions of one
   * storage, unless the kind converts from another kind's storage.
   */
  private present(text: string): string {
    if (this.kind.storedAs) return JSON.stringify(this.kind.storedAs.fromStorage(JSON.parse(text) as ObjectHeader));
    if (this.kind.defaultsOnRead) return JSON.stringify(this.read({ value: text }));
    if (!this.kind.storageApiVersion) return text;
    const served = apiVersionOf(this.kind);
    if (text.startsWith(`{"apiVersion":${JSON.stringify(served)},`)) return text;
    const obj = JSON.parse(text) as ObjectHeader;
    obj.apiVersion = served;
    return JSON.stringify(obj);
  }

  private read(stored: Pick<StoredObject, "value">): ObjectHeader {
    const obj = JSON.parse(stored.value) as ObjectHeader;
    if (this.kind.storedAs) return this.kind.storedAs.fromStorage(obj);
    if (this.kind.storageApiVersion) obj.apiVersion = apiVersionOf(this.kind);
    this.kind.defaultsOnRead?.(obj);
    return obj;
  }

  /**
   * The converter when it calls out (a CRD's conversion webhook): reads and writes of objects in
   * another version then wait for it. `None` stays on the synchronous path above.
   */
  private get webhook(): VersionConverter | undefined {
    const converter = this.kind.converter;
    return converter?.strategy === "Webhook" ? converter : undefined;
  }

  /** Stored objects as this version serves them: the webhook converts those in another version, in one call. */
  private async served(stored: ObjectHeader[], signal?: AbortSignal): Promise<ObjectHeader[]> {
    const converter = this.webhook;
    if (!converter) return stored.map((o) => this.read({ value: JSON.stringify(o) }));
    const objects = await converter.convert(stored, apiVersionOf(this.kind), signal);
    for (const o of objects) this.kind.defaultsOnRead?.(o);
    return objects;
  }

  /** One stored object as this version serves it. */
  /** `ctx`: whose signal a conversion webhook call would end (asked for only then). */
  private async servedOne(stored: Pick<StoredObject, "value">, ctx?: RequestContext): Promise<ObjectHeader> {
    return this.webhook ? (await this.served([parse(stored)], ctx?.signal))[0]! : this.read(stored);
  }

  /** What is written: the object in the storage version (the caller's copy keeps the served one). */
  /** The object as stored. A request whose deadline passed (its signal aborted) stops here: it writes nothing. */
  private async persisted(obj: ObjectHeader, ctx: RequestContext): Promise<ObjectHeader> {
    deadlineCheck(ctx);
    if (this.kind.storedAs) return this.kind.storedAs.toStorage(obj);
    const storage = this.kind.storageApiVersion;
    if (!storage) return obj;
    const converter = this.webhook;
    if (!converter || obj.apiVersion === storage) return { ...obj, apiVersion: storage };
    const [converted] = await converter.convert([obj], storage, ctx.signal);
    deadlineCheck(ctx);
    return converted!;
  }

  /**
   * Writes `obj` as stored; the caller's object gets the resourceVersion the write gave (a converted
   * copy has metadata of its own). Answers the JSON the write made of `obj` when it stored `obj` itself,
   * so that the answer need not serialize it again.
   */
  private async persist(
    obj: ObjectHeader,
    ctx: RequestContext,
    write: (stored: ObjectHeader) => Promise<Change>,
  ): Promise<string | undefined> {
    const stored = await this.persisted(obj, ctx);
    const change = await write(stored);
    if (stored === obj) return change.value;
    if (stored.metadata !== obj.metadata) obj.metadata.resourceVersion = stored.metadata.resourceVersion;
    return undefined;
  }

  // ---- reads ----------------------------------------------------------------------------------

  async get(namespace: string, name: string): Promise<StoredObject> {
    const found = await this.deps.storage.get(this.key(namespace, name));
    if (!found) throw errors.notFound(this.gr, name);
    if (this.webhook) return { ...found, value: JSON.stringify(await this.servedOne(found)) };
    return this.converts ? { ...found, value: this.present(found.value) } : found;
  }

  /** The current object, or undefined when there is none (for the apiserver's own controllers). */
  async find(namespace: string, name: string): Promise<ObjectHeader | undefined> {
    const found = await this.deps.storage.get(this.key(namespace, name));
    if (found && this.webhook) return this.servedOne(found);
    return found && JSON.parse(this.converts ? this.present(found.value) : found.value);
  }

  async list(options: ListOptions): Promise<ListResponse> {
    const plan = planList(this.kind, options, false);
    return this.runList(plan, options.signal);
  }

  private async runList(plan: ListPlan, signal?: AbortSignal): Promise<ListResponse> {
    const current = this.deps.hub.revision;
    if (plan.minRevision !== undefined && plan.minRevision > current) {
      await this.waitForRevision(plan.minRevision, signal);
    }
    const webhook = this.webhook;
    const apiVersion = apiVersionOf(this.kind);
    try {
      const result = await this.deps.storage.list({
        resource: storageResource(this.kind),
        namespace: plan.namespace,
        after: plan.after,
        revision: plan.exactRevision,
        limit: plan.limit,
        // Selectors name the served kind's fields. Through a webhook, objects stored in another version
        // are selected once converted, after the page is read: a page may hold fewer than `limit`.
        filter:
          plan.filter &&
          (webhook
            ? (o) => {
                const obj = parse(o);
                if (obj.apiVersion !== apiVersion) return true;
                this.kind.defaultsOnRead?.(obj);
                return plan.filter!(obj);
              }
            : (o) => (!plan.textMayMatch || plan.textMayMatch(o.value)) && plan.filter!(this.read(o))),
      });
      let items = result.items;
      if (webhook) {
        // The whole page in one ConversionReview, as Kubernetes converts a list.
        const served = await this.served(items.map(parse), signal);
        items = items
          .map((o, i) => ({ stored: o, obj: served[i]! }))
          .filter(({ obj }) => !plan.filter || plan.filter(obj))
          .map(({ stored, obj }) => ({ ...stored, value: JSON.stringify(obj) }));
      } else if (this.converts) items = items.map((o) => ({ ...o, value: this.present(o.value) }));
      const response: ListResponse = { items, resourceVersion: String(result.revision) };
      if (result.continueAfter) {
        response.continue = plan.encodeContinue(result.revision, result.continueAfter);
        if (result.remaining !== undefined) response.remainingItemCount = result.remaining;
      }
      return response;
    } catch (e) {
      if (e instanceof CompactedError) throw plan.expired(e);
      throw e;
    }
  }

  /** A resourceVersion newer than what is committed: wait briefly, as Kubernetes does, then 504. */
  private async waitForRevision(revision: number, signal?: AbortSignal): Promise<void> {
    const deadline = Date.now() + 3000;
    while (this.deps.hub.revision < revision) {
      signal?.throwIfAborted();
      if (Date.now() > deadline) {
        // storage.NewTooLargeResourceVersionError as the watch cache returns it.
        throw failure(504, "Timeout", `Timeout: Too large resource version: ${revision}, current: ${this.deps.hub.revision}`, {
          causes: [{ reason: "ResourceVersionTooLarge", message: "Too large resource version" }],
          retryAfterSeconds: 1,
        });
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async watch(request: WatchRequest, profileAnnotation: string): Promise<Watcher> {
    const plan = planList(this.kind, request, true);
    const apiVersion = apiVersionOf(this.kind);
    const matches = plan.filter;
    const hub = this.deps.hub;
    if (this.webhook) return this.watchConverted(request, plan, profileAnnotation);
    const filter = (change: Change): WatchEvent | undefined => {
      const event = select(change);
      // A copy: events of unfiltered watchers are shared between them.
      return event && this.converts ? { ...event, object: this.present(event.object) } : event;
    };
    const select = (change: Change): WatchEvent | undefined => {
      if (plan.namespace !== undefined && change.namespace !== plan.namespace) return undefined;
      if (!matches) return plainEvent(change);
      const served = (text: string) => this.read({ value: text });
      const now = change.type !== "DELETED" && matches(served(change.value));
      const before = change.prevValue !== undefined && matches(served(change.prevValue));
      if (change.type === "DELETED") {
        return before ? { type: "DELETED", object: change.value, revision: change.revision } : undefined;
      }
      if (now) return { type: before ? "MODIFIED" : "ADDED", object: change.value, revision: change.revision };
      if (!before) return undefined;
      // Leaving the selection looks like a deletion: the previous content at the new revision.
      const prev = JSON.parse(change.prevValue!) as ObjectHeader;
      prev.metadata.resourceVersion = String(change.revision);
      return { type: "DELETED", object: JSON.stringify(prev), revision: change.revision };
    };

    if (!plan.initialEvents) {
      const after = plan.startRevision ?? hub.revision;
      if (plan.minRevision !== undefined && plan.minRevision > hub.revision) await this.waitForRevision(plan.minRevision);
      try {
        return await hub.watch({ resource: storageResource(this.kind), after, filter });
      } catch (e) {
        if (e instanceof CompactedError) throw plan.expired(e);
        throw e;
      }
    }
    // Current state first (as ADDED), then changes after the revision that state was read at.
    const snapshot = await this.runList({ ...plan, limit: undefined, after: undefined });
    const revision = Number(snapshot.resourceVersion);
    const watcher = await hub.watch({ resource: storageResource(this.kind), after: revision, filter });
    const initial: WatchEvent[] = snapshot.items.map((o) => ({ type: "ADDED", object: o.value, revision: o.revision }));
    if (request.sendInitialEvents) {
      const bookmark = {
        kind: this.kind.kind,
        apiVersion,
        metadata: { resourceVersion: String(revision), annotations: { [profileAnnotation]: "true" } },
      };
      initial.push({ type: "BOOKMARK", object: JSON.stringify(bookmark), revision });
    }
    watcher.prepend(initial);
    return watcher;
  }

  /**
   * A watch through a conversion webhook: changes are collected as the hub hands them over, converted
   * in order (those that arrived together in one call), selected on the converted objects, then queued
   * on the watcher the client reads. A failed conversion ends the watch with an ERROR event, as
   * Kubernetes' watch does when it cannot decode an object.
   */
  private async watchConverted(request: WatchRequest, plan: ListPlan, profileAnnotation: string): Promise<Watcher> {
    const hub = this.deps.hub;
    const resource = storageResource(this.kind);
    const pending: Change[] = [];
    let inner: Watcher | undefined;
    const outer = new Watcher({ resource, after: 0, filter: () => undefined }, () => inner?.close());
    let pumping = false;
    const pump = async () => {
      if (pumping) return;
      pumping = true;
      try {
        while (pending.length > 0 && !outer.isClosed) {
          for (const event of await this.convertChanges(pending.splice(0), plan)) outer.push(event);
        }
      } catch (e) {
        const status = e instanceof StatusError ? e.status : errors.internal((e as Error).message).status;
        outer.push({ type: "ERROR", object: JSON.stringify(status), revision: hub.revision });
        outer.close();
      } finally {
        pumping = false;
      }
    };
    // The hub's watcher only collects: what the client sees is queued on `outer` once converted.
    const collect = (change: Change): undefined => {
      if (plan.namespace !== undefined && change.namespace !== plan.namespace) return undefined;
      pending.push(change);
      if (!pumping) queueMicrotask(() => void pump());
      return undefined;
    };
    const start = async (after: number) => {
      try {
        inner = await hub.watch({ resource, after, filter: collect });
      } catch (e) {
        outer.close();
        if (e instanceof CompactedError) throw plan.expired(e);
        throw e;
      }
    };
    if (!plan.initialEvents) {
      if (plan.minRevision !== undefined && plan.minRevision > hub.revision) await this.waitForRevision(plan.minRevision);
      await start(plan.startRevision ?? hub.revision);
      return outer;
    }
    const snapshot = await this.runList({ ...plan, limit: undefined, after: undefined });
    const revision = Number(snapshot.resourceVersion);
    await start(revision);
    const initial: WatchEvent[] = snapshot.items.map((o) => ({ type: "ADDED", object: o.value, revision: o.revision }));
    if (request.sendInitialEvents) {
      const bookmark = {
        kind: this.kind.kind,
        apiVersion: apiVersionOf(this.kind),
        metadata: { resourceVersion: String(revision), annotations: { [profileAnnotation]: "true" } },
      };
      initial.push({ type: "BOOKMARK", object: JSON.stringify(bookmark), revision });
    }
    outer.prepend(initial);
    return outer;
  }

  /** Watch events of changes, their objects (and, under a selector, the previous ones) converted in one call. */
  private async convertChanges(changes: Change[], plan: ListPlan): Promise<WatchEvent[]> {
    const matches = plan.filter;
    const stored: ObjectHeader[] = [];
    for (const change of changes) {
      stored.push(JSON.parse(change.value) as ObjectHeader);
      if (matches && change.prevValue !== undefined) stored.push(JSON.parse(change.prevValue) as ObjectHeader);
    }
    const served = await this.served(stored);
    const events: WatchEvent[] = [];
    let at = 0;
    for (const change of changes) {
      const obj = served[at++]!;
      const prev = matches && change.prevValue !== undefined ? served[at++] : undefined;
      const revision = change.revision;
      if (!matches) {
        events.push({ type: change.type, object: JSON.stringify(obj), revision });
        continue;
      }
      const now = change.type !== "DELETED" && matches(obj);
      const before = prev !== undefined && matches(prev);
      if (change.type === "DELETED") {
        if (before) events.push({ type: "DELETED", object: JSON.stringify(obj), revision });
      } else if (now) {
        events.push({ type: before ? "MODIFIED" : "ADDED", object: JSON.stringify(obj), revision });
      } else if (before) {
        // Leaving the selection looks like a deletion: the previous content at the new revision.
        prev!.metadata.resourceVersion = String(revision);
        events.push({ type: "DELETED", object: JSON.stringify(prev), revision });
      }
    }
    return events;
  }

  // ---- decoding -------------------------------------------------------------------------------

  /** Body → object of this kind: apiVersion/kind checks, unknown/duplicate fields, types, defaults. */
  decode(body: Body, ctx: RequestContext, options: WriteOptions): ObjectHeader {
    const obj = decodeAs(
      {
        apiVersion: apiVersionOf(this.kind),
        version: this.kind.version,
        kind: this.kind.kind,
        schema: this.kind.schema,
        prune: this.kind.prune,
      },
      body,
      ctx,
      options,
      // Go decodes an absent field as its zero value and validation then says "Required value".
      (name, errs) => this.invalid(name, errs),
    );
    const decodingError = this.kind.strategy.fromVersioned?.(obj);
    if (decodingError) {
      const { kind, version } = this.kind;
      throw errors.badRequest(`${kind} in version ${JSON.stringify(version)} cannot be handled as a ${kind}: ${decodingError}`);
    }
    this.kind.strategy.defaults?.(obj);
    return obj;
  }

  // ---- action subresources (POST answered from the object) ------------------------------------

  async act(namespace: string, name: string, action: string, body: Body, ctx: RequestContext, options: WriteOptions) {
    const sub = this.kind.actions?.[action];
    if (!sub) throw errors.notFoundPath();
    const parent = parse(await this.get(namespace, name));
    const apiVersion = sub.group ? `${sub.group}/${sub.version}` : sub.version;
    // Read before decoding, which sets the action's own apiVersion.
    const requested = (body.value as { apiVersion?: unknown } | null)?.apiVersion;
    const request = decodeAs({ ...sub, apiVersion, checkApiVersion: false }, { value: body.value }, ctx, options);
    sub.defaults?.(request);
    const answer = await sub.answer(parent, request, ctx, this.cluster, {
      delete: async (deleteOptions, dryRun) => {
        await this.delete(namespace, name, ctx, deleteOptions, dryRun || options.dryRun === true);
      },
      rewrite: (preconditions, change, dryRun) =>
        this.rewrite(namespace, name, ctx, preconditions, change, dryRun || options.dryRun === true),
    });
    // kubectl sends `kubectl create token`'s TokenRequest as authentication.k8s.io/v1 whatever the
    // profile, and decodes the answer only under that name: a request under the Kubernetes name of the
    // action's group is answered under it.
    const domain = `.${ctx.profile.apiDomain}`;
    const kubernetesName = sub.group.endsWith(domain) ? `${sub.group.slice(0, -domain.length)}.k8s.io/${sub.version}` : undefined;
    if (kubernetesName && requested === kubernetesName && answer.apiVersion === apiVersion) answer.apiVersion = kubernetesName;
    return answer;
  }

  /** Kubernetes' GuaranteedUpdate with preconditions, for actions that write their parent themselves. */
  private async rewrite(
    namespace: string,
    name: string,
    ctx: RequestContext,
    preconditions: { uid?: string; resourceVersion?: string },
    change: (current: ObjectHeader) => ObjectHeader,
    dryRun: boolean,
  ): Promise<ObjectHeader> {
    const key = this.key(namespace, name);
    for (;;) {
      deadlineCheck(ctx);
      const stored = await this.deps.storage.get(key);
      if (!stored) throw errors.notFound(this.gr, name);
      const current = await this.servedOne(stored, ctx);
      const failed = (what: string, expected: string, actual: string) =>
        errors.conflict(
          this.gr,
          name,
          `StorageError: invalid object, Code: 4, Key: ${keyText(key)}, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: ${what} in precondition: ${expected}, ${what} in object meta: ${actual}`,
        );
      if (preconditions.uid && preconditions.uid !== current.metadata.uid)
        throw failed("UID", preconditions.uid, current.metadata.uid ?? "");
      if (preconditions.resourceVersion && preconditions.resourceVersion !== String(stored.revision)) {
        throw failed("ResourceVersion", preconditions.resourceVersion, String(stored.revision));
      }
      // `current` is this attempt's own parse of the stored value: the change may work on it directly.
      const obj = change(current);
      obj.metadata.resourceVersion = String(stored.revision);
      if (dryRun) return obj;
      try {
        await this.persist(obj, ctx, (value) => this.deps.storage.update(key, value, stored.revision));
        return obj;
      } catch (e) {
        if (e instanceof RevisionConflictError || e instanceof KeyNotFoundError) continue;
        if (e instanceof ObjectTooLargeError) throw objectTooLarge(e);
        throw e;
      }
    }
  }

  // ---- /scale ----------------------------------------------------------------------------------

  private get scaleMapping() {
    if (!this.kind.scale) throw errors.notFoundPath();
    return this.kind.scale;
  }

  /** The autoscaling/v1 Scale view of an object. */
  scaleOf(obj: ObjectHeader): ObjectHeader {
    const mapping = this.scaleMapping;
    const replicas = readPath(obj, mapping.specReplicasPath);
    if (typeof replicas !== "number") {
      throw failure(500, "", `the spec replicas field "${mapping.specReplicasPath}" does not exist`);
    }
    const m = obj.metadata;
    const selector = mapping.selector?.(obj);
    return {
      kind: "Scale",
      apiVersion: "autoscaling/v1",
      metadata: {
        name: m.name,
        ...(m.namespace ? { namespace: m.namespace } : {}),
        uid: m.uid,
        resourceVersion: m.resourceVersion,
        creationTimestamp: m.creationTimestamp,
      },
      spec: { replicas },
      status: {
        replicas: (readPath(obj, mapping.statusReplicasPath) as number | undefined) ?? 0,
        ...(selector ? { selector } : {}),
      },
    };
  }

  async getScale(namespace: string, name: string): Promise<ObjectHeader> {
    return this.scaleOf(parse(await this.get(namespace, name)));
  }

  /**
   * Changes the replica count through a Scale: `change` turns the current Scale into the requested one
   * (a PUT body or a patched Scale). The object is updated with the main strategy, so the same rules,
   * generation and preconditions apply; the answer is the Scale of the result.
   */
  async updateScale(
    namespace: string,
    name: string,
    ctx: RequestContext,
    options: WriteOptions,
    change: (current: ObjectHeader) => unknown,
  ): Promise<WriteResult> {
    const mapping = this.scaleMapping;
    const result = await this.update(namespace, name, "scale", ctx, options, (current) => {
      if (!current) throw errors.notFound(this.gr, name);
      const scale = decodeAs(SCALE, { value: change(this.scaleOf(current)) }, ctx, options) as Scale & ObjectHeader;
      const replicas = scale.spec.replicas ?? 0;
      if (replicas < 0) {
        throw errors.invalid({ group: "autoscaling", kind: "Scale" }, name, [
          fieldError.invalid("spec.replicas", replicas, "must be greater than or equal to 0"),
        ]);
      }
      const obj = clone(current);
      writePath(obj, mapping.specReplicasPath, replicas);
      // The Scale's resourceVersion, if any, is the precondition; none means unconditional.
      obj.metadata.resourceVersion = scale.metadata.resourceVersion || undefined;
      return obj;
    });
    return { object: this.scaleOf(result.object), code: 200 };
  }

  /** What still holds an object's deletion back. */
  private pendingFinalizers(obj: ObjectHeader): readonly string[] {
    return [...(obj.metadata.finalizers ?? []), ...(this.kind.strategy.specFinalizers?.(obj) ?? [])];
  }

  // ---- writes ---------------------------------------------------------------------------------

  private invalid(name: string, errs: FieldError[]): never {
    throw errors.invalid(this.gk, name, errs);
  }

  /** NamespaceLifecycle admission: the namespace must exist and not be terminating. */
  private async checkNamespace(namespace: string, obj: ObjectHeader): Promise<void> {
    if (!this.kind.namespaced) return;
    const phase = await this.namespacePhase(namespace);
    if (phase === undefined) throw errors.notFound({ group: "", resource: "namespaces" }, namespace);
    if (phase === "Terminating") {
      const forbidden = forbiddenByAdmission(
        this.gr,
        obj,
        `unable to create new content in namespace ${namespace} because it is being terminated`,
      );
      throw new StatusError({
        ...forbidden.status,
        details: {
          ...forbidden.status.details,
          causes: [
            {
              reason: "NamespaceTerminating",
              message: `namespace ${namespace} is being terminated`,
              field: "metadata.namespace",
            },
          ],
        },
      });
    }
  }

  /** A namespace's phase (`Active` when it has none yet), or undefined when it does not exist. */
  private async namespacePhase(namespace: string): Promise<string | undefined> {
    const known = this.deps.namespaces?.phase(namespace);
    if (known !== undefined) return known;
    // Not in the index: absent, or created through another apiserver a moment ago and not heard of yet
    // here (Kubernetes' NamespaceLifecycle looks such a namespace up live, too).
    const ns = await this.deps.storage.get({ ...NAMESPACES, name: namespace });
    return ns && ((JSON.parse(ns.value) as { status?: { phase?: string } }).status?.phase ?? "Active");
  }

  /** The namespace in the path wins; a different one in the body is a client error. */
  private placeInNamespace(obj: ObjectHeader, namespace: string): void {
    const meta = obj.metadata;
    if (!this.kind.namespaced) {
      delete meta.namespace;
      return;
    }
    if (meta.namespace && meta.namespace !== namespace) {
      throw errors.badRequest("the namespace of the provided object does not match the namespace sent on the request");
    }
    meta.namespace = namespace;
  }

  /** Other objects, as the deps give them; without a reader the cluster looks empty. */
  private get cluster(): ClusterReader {
    return this.deps.cluster ?? { list: async () => [], get: async () => undefined };
  }

  /** The object as the request proposed it, before the strategy prepared it; kept only when fields are tracked. */
  private proposal(obj: ObjectHeader, options: WriteOptions): ObjectHeader | undefined {
    return options.fieldManager !== undefined ? clone(obj) : undefined;
  }

  /**
   * managedFields, for every write path (create, update, patch, apply, subresources): the request's
   * manager gains what it changed; what the strategy reset (status on the main endpoint, the rest on
   * /status) is nobody's doing.
   */
  private recordManagedFields(
    live: ObjectHeader | undefined,
    proposed: ObjectHeader | undefined,
    obj: ObjectHeader,
    subresource: string | undefined,
    options: WriteOptions,
  ): void {
    if (!proposed || options.fieldManager === undefined) return;
    recordWrite(live, proposed, obj, kindShape(this.kind), {
      manager: options.fieldManager,
      apiVersion: apiVersionOf(this.kind),
      ...(subresource ? { subresource } : {}),
      operation: options.apply ? "Apply" : "Update",
      hasStatusSubresource: this.kind.subresources.status !== undefined,
    });
  }

  /** Cross-object rules, after the object's own rules passed. */
  private async admit(strategy: SubresourceStrategy, obj: ObjectHeader, old: ObjectHeader | undefined, ctx: RequestContext) {
    if (!strategy.admit) return;
    const errs = await strategy.admit(obj, old, ctx, this.cluster);
    if (errs.length > 0) this.invalid(obj.metadata.name ?? "", errs);
  }

  private validate(strategy: Strategy, obj: ObjectHeader, old: ObjectHeader | undefined, ctx: RequestContext) {
    const errs = old
      ? [...validateMetaForUpdate(this.kind, obj, old), ...(strategy.validateUpdate?.(obj, old, ctx) ?? [])]
      : [...validateMetaForCreate(this.kind, obj), ...(strategy.validate?.(obj, ctx) ?? [])];
    if (errs.length > 0) this.invalid(obj.metadata.name ?? "", errs);
    const warnings = strategy.warnings?.(obj, old, ctx);
    if (warnings) ctx.warnings.push(...warnings);
  }

  // ---- admission --------------------------------------------------------------------------------

  private attributes(
    operation: AdmissionOperation,
    subresource: string,
    object: ObjectHeader | undefined,
    oldObject: ObjectHeader | undefined,
    ctx: RequestContext,
    options: WriteOptions | { dryRun: boolean; delete: DeleteOptions },
  ): AdmissionAttributes {
    const source = object ?? oldObject;
    const scale = subresource === "scale";
    return {
      definition: this.kind,
      kind: scale
        ? { group: "autoscaling", version: "v1", kind: "Scale" }
        : { group: this.kind.group, version: this.kind.version, kind: this.kind.kind },
      subresource,
      operation,
      namespace: this.kind.namespaced ? (source?.metadata.namespace ?? "") : "",
      name: source?.metadata.name ?? "",
      object: object && scale ? this.scaleOf(object) : object,
      oldObject: oldObject && scale ? this.scaleOf(oldObject) : oldObject,
      dryRun: options.dryRun === true,
      options: admissionOptions(operation, options),
      ctx,
    };
  }

  /**
   * A webhook's change, decoded again as a body of this kind would be (unknown fields dropped,
   * defaults applied): what Kubernetes does with a patched object. Undecodable is the server's error.
   */
  private redecode(mutated: ObjectHeader, ctx: RequestContext): ObjectHeader {
    try {
      return this.decode({ value: mutated }, ctx, { fieldValidation: "Ignore" });
    } catch (e) {
      if (e instanceof StatusError) throw errors.internal(e.status.message ?? "");
      throw e;
    }
  }

  private async mutateOnCreate(namespace: string, obj: ObjectHeader, ctx: RequestContext, options: WriteOptions): Promise<ObjectHeader> {
    // NamespaceLifecycle comes first: no webhook hears of a write into a namespace that cannot take it.
    await this.checkNamespace(namespace, obj);
    const mutated = await this.deps.admission!.mutate(this.attributes("CREATE", "", obj, undefined, ctx, options));
    if (!mutated || mutated === obj) return obj;
    const decoded = this.redecode(mutated, ctx);
    this.placeInNamespace(decoded, namespace);
    return decoded;
  }

  private async mutateOnUpdate(
    namespace: string,
    subresource: string,
    obj: ObjectHeader,
    current: ObjectHeader,
    ctx: RequestContext,
    options: WriteOptions,
  ): Promise<ObjectHeader> {
    const attributes = this.attributes("UPDATE", subresource, obj, current, ctx, options);
    const mutated = await this.deps.admission!.mutate(attributes);
    if (!mutated || mutated === attributes.object) return obj;
    if (subresource === "scale") {
      // A changed Scale changes the replicas it maps to; the rest of a Scale is derived.
      const replicas = (mutated as { spec?: { replicas?: unknown } }).spec?.replicas;
      if (typeof replicas === "number") writePath(obj, this.scaleMapping.specReplicasPath, replicas);
      return obj;
    }
    const decoded = this.redecode(mutated, ctx);
    decoded.metadata.name = obj.metadata.name;
    this.placeInNamespace(decoded, namespace);
    return decoded;
  }

  private validateUpdate(subresource: string, obj: ObjectHeader, current: ObjectHeader, ctx: RequestContext, options: WriteOptions) {
    return this.deps.admission!.validate(this.attributes("UPDATE", subresource, obj, current, ctx, options));
  }

  /** A delete is admitted on the stored object; mutating webhooks are asked too, with nothing to change. */
  private async admitDelete(
    namespace: string,
    name: string,
    current: ObjectHeader,
    ctx: RequestContext,
    options: DeleteOptions,
    dryRun: boolean,
  ): Promise<void> {
    const attributes = this.attributes("DELETE", "", undefined, current, ctx, { dryRun, delete: options });
    attributes.namespace = this.kind.namespaced ? namespace : "";
    attributes.name = name;
    await this.deps.admission!.mutate(attributes);
    await this.deps.admission!.validate(attributes);
  }

  async create(namespace: string, body: Body, ctx: RequestContext, options: WriteOptions): Promise<WriteResult> {
    const obj = this.decode(body, ctx, options);
    const strategy = this.kind.strategy;
    if (strategy.answer) {
      this.placeInNamespace(obj, namespace);
      strategy.prepareForCreate?.(obj, ctx);
      const errs = strategy.validate?.(obj, ctx) ?? [];
      if (errs.length > 0) this.invalid(obj.metadata.name ?? "", errs);
      return { object: await strategy.answer(obj, ctx), code: 201 };
    }
    return this.createObject(namespace, obj, ctx, options);
  }

  async createObject(namespace: string, requested: ObjectHeader, ctx: RequestContext, options: WriteOptions): Promise<WriteResult> {
    this.placeInNamespace(requested, namespace);
    const admitting = this.deps.admission?.handles(this.kind) === true;
    if (this.kind.strategy.admitCreate) {
      // NamespaceLifecycle comes before every other admission plugin.
      await this.checkNamespace(namespace, requested);
      await this.kind.strategy.admitCreate(requested, ctx, this.cluster);
    }
    // Mutating admission sees the object as the client sent it, before the server fills in its fields.
    const obj = admitting ? await this.mutateOnCreate(namespace, requested, ctx, options) : requested;
    const meta = obj.metadata;
    if (meta.resourceVersion && !options.dryRun) {
      // Kubernetes' storage answers this with a 500; it is the client's mistake, so here a 400.
      throw errors.badRequest("resourceVersion should not be set on objects to be created");
    }
    const generated = !meta.name && !!meta.generateName;
    if (generated) meta.name = generateName(meta.generateName!);
    meta.uid = randomUUID();
    meta.creationTimestamp = rfc3339();
    meta.generation = 1;
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    delete meta.selfLink;
    const proposed = this.proposal(obj, options);
    this.kind.strategy.prepareForCreate?.(obj, ctx);
    this.recordManagedFields(undefined, proposed, obj, undefined, options);
    this.validate(this.kind.strategy, obj, undefined, ctx);
    let written = false;
    try {
      await this.admit(this.kind.strategy, obj, undefined, ctx);
      await this.checkNamespace(namespace, obj);
      if (admitting) await this.deps.admission!.validate(this.attributes("CREATE", "", obj, undefined, ctx, options));
      if (options.dryRun) {
        const key = this.key(namespace, meta.name!);
        if (await this.deps.storage.get(key)) throw await this.alreadyExists(key);
        return { object: obj, code: 201 };
      }
      // A generated name that is taken is generated again, up to Kubernetes' 8 attempts.
      for (let attempt = 1; ; attempt++) {
        const key = this.key(namespace, meta.name!);
        try {
          const text = await this.persist(obj, ctx, (stored) => this.deps.storage.create(key, stored));
          written = true;
          return text === undefined ? { object: obj, code: 201 } : { object: obj, code: 201, text };
        } catch (e) {
          if (e instanceof ObjectTooLargeError) throw objectTooLarge(e);
          if (!(e instanceof KeyExistsError)) throw e;
          if (!generated) throw await this.alreadyExists(key);
          if (attempt >= MAX_NAME_GENERATION_ATTEMPTS) {
            const err = errors.alreadyExists(this.gr, key.name);
            err.status.message += ", the server was not able to generate a unique name for the object";
            err.status.details = { ...err.status.details, retryAfterSeconds: 1 };
            throw err;
          }
          meta.name = generateName(meta.generateName!);
        }
      }
    } finally {
      if (!written) await this.kind.strategy.revertAdmit?.(obj);
    }
  }

  /** AlreadyExists, saying so when the existing object is on its way out. */
  private async alreadyExists(key: ObjectKey): Promise<StatusError> {
    const err = errors.alreadyExists(this.gr, key.name);
    const existing = await this.deps.storage.get(key);
    if (existing && parse(existing).metadata.deletionTimestamp) {
      err.status.message = `object is being deleted: ${err.status.message}`;
    }
    return err;
  }

  /**
   * Replaces an object (PUT) on the main endpoint or a subresource. `mutate` turns the current
   * object into the requested one; it runs again on each retry after a conflicting write.
   *
   * As Kubernetes' GuaranteedUpdate: when another write lands between the read and the write, the
   * object is read again and `mutate` runs again, until the write goes through or the request's
   * deadline passes. Only a resourceVersion in what `mutate` returns (a PUT body's, a patch that sets
   * one) is a precondition, and a stale one is a 409; a patch carries the current object's, so it
   * always applies to the newest state. `mutate` gets a copy of the current object to change, unless it
   * takes no argument (a PUT's, which replaces the object with its body): then no copy is made.
   */
  async update(
    namespace: string,
    name: string,
    subresource: string | undefined,
    ctx: RequestContext,
    options: WriteOptions,
    mutate: (current: ObjectHeader | undefined) => ObjectHeader,
  ): Promise<WriteResult> {
    // /scale changes the object through its main strategy.
    const strategy: SubresourceStrategy | undefined =
      subresource && subresource !== "scale" ? this.kind.subresources[subresource] : this.kind.strategy;
    if (!strategy) throw errors.notFoundPath();
    for (;;) {
      deadlineCheck(ctx);
      const stored = await this.deps.storage.get(this.key(namespace, name));
      const current = stored && (await this.servedOne(stored, ctx));
      let obj = mutate(current && mutate.length > 0 ? clone(current) : undefined);
      let meta = obj.metadata;
      // An empty name in the body mismatches too (Kubernetes' checkName).
      if ((meta.name ?? "") !== name) {
        throw errors.badRequest(`the name of the object (${meta.name ?? ""}) does not match the name on the URL (${name})`);
      }
      meta.name = name;
      this.placeInNamespace(obj, namespace);
      if (!stored || !current) {
        if (!(this.kind.allowCreateOnUpdate || options.apply) || subresource) throw errors.notFound(this.gr, name);
        delete meta.resourceVersion;
        try {
          return await this.createObject(namespace, obj, ctx, options);
        } catch (e) {
          // Created by someone else meanwhile: this write now updates what they created.
          if (e instanceof StatusError && e.status.reason === "AlreadyExists" && !options.dryRun) continue;
          throw e;
        }
      }
      const precondition = meta.resourceVersion;
      if (precondition && precondition !== String(stored.revision)) throw errors.modified(this.gr, name);
      // A uid in the body is a precondition too (Kubernetes' storage Preconditions), not an immutable-field error.
      if (meta.uid && meta.uid !== current.metadata.uid) {
        throw errors.conflict(
          this.gr,
          name,
          `StorageError: invalid object, Code: 4, Key: ${keyText(this.key(namespace, name))}, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: ${meta.uid}, UID in object meta: ${current.metadata.uid ?? ""}`,
        );
      }
      const admitting = this.deps.admission?.handles(this.kind) === true;
      if (admitting) {
        obj = await this.mutateOnUpdate(namespace, subresource ?? "", obj, current, ctx, options);
        meta = obj.metadata;
      }
      // System fields are the server's, whatever the body says; an unconditional update is based on
      // the current revision.
      meta.resourceVersion = String(stored.revision);
      meta.uid = meta.uid || current.metadata.uid;
      meta.creationTimestamp = current.metadata.creationTimestamp;
      meta.generation = current.metadata.generation;
      meta.deletionTimestamp = current.metadata.deletionTimestamp;
      meta.deletionGracePeriodSeconds = current.metadata.deletionGracePeriodSeconds;
      if (current.metadata.managedFields && !meta.managedFields) meta.managedFields = current.metadata.managedFields;
      const proposed = this.proposal(obj, options);
      strategy.prepareForUpdate?.(obj, current, ctx);
      this.recordManagedFields(current, proposed, obj, subresource, options);
      this.validate(strategy, obj, current, ctx);
      let written = false;
      try {
        await this.admit(strategy, obj, current, ctx);
        if (admitting) await this.validateUpdate(subresource ?? "", obj, current, ctx, options);
        // Only the main endpoint (and /scale, which writes through it) moves the generation, as in Kubernetes.
        if ((!subresource || subresource === "scale") && !specEqual(this.kind, obj, current))
          meta.generation = (current.metadata.generation ?? 0) + 1;
        dropUndefined(meta);
        // A no-op, unless the stored value is under an older encryption key: rewriting it is the point.
        if (sameObject(obj, current) && !stored.stale) return { object: current, code: 200 };
        if (options.dryRun) return { object: obj, code: 200 };
        try {
          if (meta.deletionTimestamp && !meta.deletionGracePeriodSeconds && this.pendingFinalizers(obj).length === 0) {
            // The last finalizer is gone from an object being deleted: it goes now.
            await this.persist(obj, ctx, (value) => this.deps.storage.delete(this.key(namespace, name), value, stored.revision));
            written = true;
            return { object: obj, code: 200 };
          }
          const text = await this.persist(obj, ctx, (value) => this.deps.storage.update(this.key(namespace, name), value, stored.revision));
          written = true;
          return text === undefined ? { object: obj, code: 200 } : { object: obj, code: 200, text };
        } catch (e) {
          // Changed or deleted since it was read: read it again and redo the request's change on it.
          if (e instanceof RevisionConflictError || e instanceof KeyNotFoundError) continue;
          if (e instanceof ObjectTooLargeError) throw objectTooLarge(e);
          throw e;
        }
      } finally {
        if (!written) await strategy.revertAdmit?.(obj);
      }
    }
  }

  async delete(
    namespace: string,
    name: string,
    ctx: RequestContext,
    options: DeleteOptions,
    dryRun: boolean,
    guarded = true,
  ): Promise<DeleteResult> {
    validateDeleteOptions(options);
    if (guarded) this.kind.strategy.beforeDelete?.(name);
    for (let attempt = 0; ; attempt++) {
      const stored = await this.get(namespace, name);
      const current = parse(stored);
      const pre = options.preconditions;
      // Kubernetes checks delete preconditions early and names the kind, not the resource, here.
      const byKind = { group: this.kind.group, resource: this.kind.kind };
      if (pre?.uid && pre.uid !== current.metadata.uid) {
        throw errors.conflict(
          byKind,
          name,
          `the UID in the precondition (${pre.uid}) does not match the UID in record (${current.metadata.uid ?? ""}). The object might have been deleted and then recreated`,
        );
      }
      if (pre?.resourceVersion && pre.resourceVersion !== String(stored.revision)) {
        throw errors.conflict(
          byKind,
          name,
          `the ResourceVersion in the precondition (${pre.resourceVersion}) does not match the ResourceVersion in record (${stored.revision}). The object might have been modified`,
        );
      }
      if (this.deps.admission?.handles(this.kind)) await this.admitDelete(namespace, name, current, ctx, options, dryRun);
      const grace = this.kind.strategy.gracePeriod?.(current, options.gracePeriodSeconds) ?? 0;
      try {
        if (grace > 0) {
          // Graceful (pods on a node): marked now, removed when whoever runs it confirms with grace 0.
          const pending = current.metadata.deletionGracePeriodSeconds;
          if (pending !== undefined && pending <= grace) return { code: 200, body: current };
          const marked = clone(current);
          marked.metadata.deletionTimestamp = rfc3339(new Date(Date.now() + grace * 1000));
          marked.metadata.deletionGracePeriodSeconds = grace;
          if (pending === undefined && (marked.metadata.generation ?? 0) > 0) marked.metadata.generation! += 1;
          this.kind.strategy.prepareForDelete?.(marked);
          if (!dryRun)
            await this.persist(marked, ctx, (value) => this.deps.storage.update(this.key(namespace, name), value, stored.revision));
          return { code: 200, body: marked };
        }
        // The kind marks a deletion that starts, possibly adding finalizers of its own.
        const marked = clone(current);
        if (!current.metadata.deletionTimestamp) this.kind.strategy.prepareForDelete?.(marked);
        // The propagation policy becomes a finalizer the garbage collector acts on (orphan, foregroundDeletion).
        const finalizers = withPropagationFinalizers(marked.metadata.finalizers ?? [], options);
        const changed = !jsonEqual(finalizers, current.metadata.finalizers ?? []);
        if (finalizers.length > 0 || (this.kind.strategy.specFinalizers?.(current) ?? []).length > 0) {
          // Whoever owns a finalizer removes it; the last removal deletes the object.
          if (current.metadata.deletionTimestamp && !changed) return { code: 200, body: current };
          if (finalizers.length > 0) marked.metadata.finalizers = finalizers;
          else delete marked.metadata.finalizers;
          if (!marked.metadata.deletionTimestamp) {
            marked.metadata.deletionTimestamp = rfc3339();
            marked.metadata.deletionGracePeriodSeconds = 0;
            if ((marked.metadata.generation ?? 0) > 0) marked.metadata.generation! += 1;
          }
          if (!dryRun)
            await this.persist(marked, ctx, (value) => this.deps.storage.update(this.key(namespace, name), value, stored.revision));
          return { code: options.orphanDependents === false ? 202 : 200, body: marked };
        }
        if (!dryRun)
          await this.persist(current, ctx, (value) => this.deps.storage.delete(this.key(namespace, name), value, stored.revision));
      } catch (e) {
        if (e instanceof RevisionConflictError && attempt < MAX_RETRIES) continue;
        if (e instanceof KeyNotFoundError) throw errors.notFound(this.gr, name);
        throw e;
      }
      if (this.kind.deleteReturnsObject) return { code: 200, body: current };
      const { code: _code, ...status } = success({
        name,
        ...(this.kind.group ? { group: this.kind.group } : {}),
        kind: this.kind.plural,
        uid: current.metadata.uid,
      });
      return { code: 200, body: status };
    }
  }

  async deleteCollection(options: ListOptions, ctx: RequestContext, deleteOptions: DeleteOptions, dryRun: boolean): Promise<ListResponse> {
    validateDeleteOptions(deleteOptions);
    const listed = await this.list({ ...options, limit: undefined, continue: undefined });
    for (const item of listed.items) {
      try {
        await this.delete(item.namespace, item.name, ctx, deleteOptions, dryRun, false);
      } catch (e) {
        // Gone meanwhile is fine: the goal is that it does not exist.
        if (!(e instanceof StatusError && e.code === 404)) throw e;
      }
    }
    // Kubernetes answers with the list of what it deleted, as it was listed.
    return listed;
  }
}

interface DecodeTarget {
  apiVersion: string;
  version: string;
  kind: string;
  schema: AnySchema;
  /** Refuse a body that names another apiVersion (the main endpoint; subresources take their own). */
  checkApiVersion?: boolean;
  prune?: (obj: Record<string, unknown>) => string[];
}

/**
 * A request body as an object of `target`, as Kubernetes' decoder does: a missing apiVersion/kind is
 * taken from the endpoint, unknown and duplicate fields follow fieldValidation, a wrong type is a 400.
 * `onMissing` turns absent required members into a 422 (validation's "Required value") instead.
 */
function decodeAs(
  target: DecodeTarget,
  body: Body,
  ctx: RequestContext,
  options: WriteOptions,
  onMissing?: (name: string, errs: FieldError[]) => never,
): ObjectHeader {
  const value = body.value;
  const expected = target.kind;
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw errors.badRequest(
      `the object provided is unrecognized (must be of type ${expected}): couldn't get version/kind; json parse error: expected an object`,
    );
  }
  const raw = value as Record<string, unknown>;
  const kind = raw.kind === undefined || raw.kind === "" ? expected : String(raw.kind);
  const version = raw.apiVersion === undefined || raw.apiVersion === "" ? target.apiVersion : String(raw.apiVersion);
  if (target.checkApiVersion !== false && version !== target.apiVersion) {
    throw errors.badRequest(`the API version in the data (${version}) does not match the expected API version (${target.apiVersion})`);
  }
  const cannot = (why: string) => errors.badRequest(`${kind} in version "${target.version}" cannot be handled as a ${expected}: ${why}`);
  if (kind !== expected) throw cannot(`no conversion from ${kind} to ${expected}`);
  const unknown: string[] = [];
  if (target.prune) unknown.push(...target.prune(raw));
  pruneUnknown(target.schema, raw, unknown);
  const problems = [...unknown.map((f) => `unknown field "${f}"`), ...(body.duplicates ?? []).map((f) => `duplicate field "${f}"`)];
  const mode = options.fieldValidation ?? "Warn";
  if (problems.length > 0 && mode === "Strict") {
    throw new StrictDecodingError(cannot(`strict decoding error: ${problems.join(", ")}`).status, problems);
  }
  if (mode === "Warn") ctx.warnings.push(...problems);
  const decoded = decodeWith(target.schema, raw);
  if (!decoded.ok) {
    if (onMissing && decoded.issues.every((i) => i.missing)) {
      const name = (raw.metadata as { name?: string } | undefined)?.name ?? "";
      onMissing(
        name,
        decoded.issues.map((i) => fieldError.required(i.path)),
      );
    }
    throw cannot(decoded.issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join("; "));
  }
  const obj = decoded.value as ObjectHeader;
  obj.apiVersion = target.apiVersion;
  obj.kind = expected;
  return obj;
}

const SCALE: DecodeTarget = { apiVersion: "autoscaling/v1", version: "v1", kind: "Scale", schema: Scale, checkApiVersion: false };

/** The request's options as a webhook sees them (CreateOptions, UpdateOptions, PatchOptions, DeleteOptions). */
function admissionOptions(
  operation: AdmissionOperation,
  options: WriteOptions | { dryRun: boolean; delete: DeleteOptions },
): Record<string, unknown> {
  const dryRun = options.dryRun ? { dryRun: ["All"] } : {};
  if ("delete" in options) {
    const { preconditions, ...rest } = options.delete;
    return { kind: "DeleteOptions", apiVersion: "meta.k8s.io/v1", ...rest, ...(preconditions ? { preconditions } : {}), ...dryRun };
  }
  const kind = options.apply ? "PatchOptions" : operation === "CREATE" ? "CreateOptions" : "UpdateOptions";
  return {
    kind,
    apiVersion: "meta.k8s.io/v1",
    ...dryRun,
    ...(options.fieldManager !== undefined ? { fieldManager: options.fieldManager } : {}),
    ...(options.fieldValidation !== undefined ? { fieldValidation: options.fieldValidation } : {}),
  };
}

function dropUndefined(o: Record<string, unknown>): void {
  for (const k of Object.keys(o)) if (o[k] === undefined) delete o[k];
}

const PROPAGATION = ["Foreground", "Background", "Orphan"] as const;

function validateDeleteOptions(o: DeleteOptions): void {
  const errs: FieldError[] = [];
  if (o.propagationPolicy !== undefined && !(PROPAGATION as readonly string[]).includes(o.propagationPolicy)) {
    errs.push(fieldError.notSupported("propagationPolicy", o.propagationPolicy, [...PROPAGATION, "nil"]));
  }
  if (o.orphanDependents !== undefined && o.propagationPolicy !== undefined) {
    errs.push(fieldError.invalid("propagationPolicy", o.propagationPolicy, "orphanDependents and deletionPropagation cannot be both set"));
  }
  // A negative gracePeriodSeconds is not an error: Kubernetes treats it as 1 (it only matters to graceful kinds).
  if (errs.length > 0) throw errors.invalid({ group: "meta.k8s.io", kind: "DeleteOptions" }, "", errs);
}

export const ORPHAN_FINALIZER = "orphan";
export const FOREGROUND_FINALIZER = "foregroundDeletion";

/**
 * The finalizers a delete leaves, from its propagation policy (Kubernetes'
 * deletionFinalizersForGarbageCollection): Orphan → `orphan`, Foreground → `foregroundDeletion`,
 * Background → neither; without a policy, what the object already asks for.
 */
function withPropagationFinalizers(finalizers: readonly string[], o: DeleteOptions): string[] {
  const policy = o.orphanDependents !== undefined ? (o.orphanDependents ? "Orphan" : "Background") : o.propagationPolicy;
  if (policy === undefined) return [...finalizers];
  const rest = finalizers.filter((f) => f !== ORPHAN_FINALIZER && f !== FOREGROUND_FINALIZER);
  if (policy === "Orphan") return [...rest, ORPHAN_FINALIZER];
  if (policy === "Foreground") return [...rest, FOREGROUND_FINALIZER];
  return rest;
}
