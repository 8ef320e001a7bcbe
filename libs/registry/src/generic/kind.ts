// A kind is a declaration (`KindDefinition`) plus a strategy (`Strategy<T>`), as Kubernetes separates a
// resource's registration from its registry's RESTCreateStrategy/RESTUpdateStrategy/RESTDeleteStrategy.
// The generic store (store.ts) does everything else; no kind has request-path code of its own.
//
// Which is which: a function the store calls while it writes (decodes, creates, updates, deletes or
// answers) an object of the kind belongs to the strategy, typed with the kind's own object type `T`.
// Everything else is declaration: names, group/version, scope, verbs, schema and merge shape, flags, the
// subresource map, and the per-object functions that only describe stored objects to readers (printer
// columns, selectable fields, the /scale selector) or are part of decoding with the schema (a custom
// resource's `prune`).
import { type AnySchema, type NamingProfile, type ObjectHeader, shapeOf } from "@orch/api";
import type { FieldError, Shape } from "@orch/machinery";
import type * as v from "valibot";
import type { Authorizer, UserInfo } from "./authorizer.js";

/** What a strategy may know about the request it is serving. */
export interface RequestContext {
  user: UserInfo;
  profile: NamingProfile;
  /** Warnings to send back as `Warning` headers. */
  warnings: string[];
  /**
   * Answers access questions (signer permissions, RBAC escalation, reviews). Absent for the apiserver's
   * own in-process requests, which act as `system:masters` and may do everything.
   */
  authorizer?: Authorizer;
  /** Aborted when the request's deadline passes: the answer (504) is gone, so nothing may be written after. */
  signal?: AbortSignal;
  /**
   * Throws as `signal.throwIfAborted()` would, without making the signal: a request whose context has
   * one checks its deadline on every write, and an AbortSignal per write cost about 1.5 % of a create.
   */
  throwIfAborted?(): void;
  /** Adds an annotation to the request's audit event (admission's, as Kubernetes' Attributes.AddAnnotation); absent without audit. */
  annotate?: (key: string, value: string) => void;
}

/**
 * The objects a schema decodes to: its output type when that is an object with metadata, else any object
 * (a custom resource's loose schema, a test's `v.object({})`).
 */
export type KindObject<S extends AnySchema> = v.InferOutput<S> extends ObjectHeader ? v.InferOutput<S> : ObjectHeader;

/**
 * The behaviour of a kind's main endpoint: every hook the store calls, in the order it calls them. Each
 * gets objects of the kind's own type `T`: the store passes only objects decoded by the kind's schema
 * (the request's, or the stored one it decoded when written).
 */
export interface Strategy<T extends ObjectHeader = ObjectHeader> {
  // ---- decoding (create, update, patch, apply) ----
  /**
   * What Kubernetes does while it decodes a body into its internal type, beyond the schema: a
   * Secret's `stringData` merges into `data`, and `[]byte` values must be base64. Returns the
   * decoder's error text for a body Go would refuse (a 400), else undefined. Runs before `defaults`.
   */
  fromVersioned?: (obj: T) => string | undefined;
  /** Defaults that depend on other fields (Kubernetes' SetDefaults_<Kind>), applied after decoding. */
  defaults?: (obj: T) => void;

  // ---- create and update ----
  /**
   * Built-in mutating admission on create (Kubernetes' ServiceAccount and Priority plugins): runs
   * after the namespace is checked and before mutating webhooks, so webhooks and validation see what it
   * filled in. May change `obj`; throws a StatusError (usually 403) to refuse.
   */
  admitCreate?: (obj: T, ctx: RequestContext, cluster: ClusterReader) => Promise<void>;
  /** Normalises a new object before validation (e.g. clears status, fills server-set fields). */
  prepareForCreate?: (obj: T, ctx: RequestContext) => void;
  /** Normalises an update: copy back what this endpoint may not change. */
  prepareForUpdate?: (obj: T, old: T, ctx: RequestContext) => void;
  /**
   * Validates `metadata.name`, or a `generateName` prefix when `prefix` is true; returns Kubernetes'
   * messages (DNS subdomain by default). Some kinds' rules depend on the object (a trust bundle's signer).
   */
  validateName?: (name: string, prefix: boolean, obj: T) => string[];
  validate?: (obj: T, ctx: RequestContext) => FieldError[];
  validateUpdate?: (obj: T, old: T, ctx: RequestContext) => FieldError[];
  warnings?: (obj: T, old: T | undefined, ctx: RequestContext) => string[];
  /**
   * Rules that need other objects (e.g. one default PriorityClass), run after validation and before
   * the write. Returns field errors (422) or throws a StatusError for another code.
   */
  admit?: (obj: T, old: T | undefined, ctx: RequestContext, cluster: ClusterReader) => Promise<FieldError[]>;
  /**
   * Gives back what `admit` took outside the object (a Service's cluster IP and node ports) when the
   * object was then not written: refused after admission, a lost race, a dry run — as Kubernetes'
   * allocation transactions revert.
   */
  revertAdmit?: (obj: T) => Promise<void>;
  /**
   * The part of an object whose changes bump `metadata.generation` (default: everything but type,
   * metadata and status — see `specFields`). A Deployment adds its annotations, as Kubernetes does.
   */
  generationSource?: (obj: T) => unknown;
  /**
   * A kind whose create is answered, not stored (reviews): the decoded, prepared and validated object
   * goes in, the answer comes out with 201; nothing is written and no event is published.
   */
  answer?: (obj: T, ctx: RequestContext) => Promise<ObjectHeader> | ObjectHeader;

  // ---- delete ----
  /**
   * Refuses deleting an object by name before it is read (immortal namespaces, system priority classes),
   * throwing a StatusError. Delete-collection does not ask, as in Kubernetes.
   */
  beforeDelete?: (name: string) => void;
  /**
   * Kinds with graceful deletion (pods): the grace period a delete gets, given the one requested.
   * Above 0 the object is only marked (deletionTimestamp in the future) until deleted with 0.
   */
  gracePeriod?: (obj: T, requested: number | undefined) => number;
  /**
   * Marks an object whose deletion starts (a Namespace enters Terminating); finalizers it adds hold the
   * deletion back (a CustomResourceDefinition's instance clean-up).
   */
  prepareForDelete?: (obj: T) => void;
  /** Finalizers kept outside metadata (a Namespace's `spec.finalizers`); they also hold deletion back. */
  specFinalizers?: (obj: T) => readonly string[];
}

/**
 * The behaviour of a subresource that is written by update only (`status`, `approval`, `finalize`).
 * Deletion, defaulting and generation stay the main strategy's.
 */
export type SubresourceStrategy<T extends ObjectHeader = ObjectHeader> = Pick<
  Strategy<T>,
  "prepareForUpdate" | "validateUpdate" | "warnings" | "admit" | "revertAdmit"
>;

export interface PrinterColumn<T extends ObjectHeader = ObjectHeader> {
  name: string;
  type: "string" | "integer" | "number" | "boolean" | "date";
  /** Extracts the cell; `jsonPath` columns of custom resources compile to this. */
  value: (obj: T) => unknown;
  description?: string;
  format?: string;
  priority?: number;
}

/**
 * How `/scale` (an autoscaling/v1 Scale) maps onto the object: dotted paths as custom resources
 * declare them (`.spec.replicas`), and the selector as the string a Scale carries.
 */
export interface ScaleMapping<T extends ObjectHeader = ObjectHeader> {
  specReplicasPath: string;
  statusReplicasPath: string;
  /** The serialized label selector for `status.selector` (built-ins format `spec.selector`). */
  selector?: (obj: T) => string | undefined;
}

/** Read access to other objects, for rules that span objects (Kubernetes does these in admission). */
export interface ClusterReader {
  list(group: string, plural: string, namespace?: string): Promise<ObjectHeader[]>;
  /** One object by name (`namespace` "" when cluster-scoped); `undefined` when there is none. */
  get(group: string, plural: string, namespace: string, name: string): Promise<ObjectHeader | undefined>;
}

/**
 * A subresource answered on POST from its parent object `T`, without storing anything (Kubernetes'
 * `serviceaccounts/token`): the request is decoded with `schema` as `group/version` `kind`, to `R`.
 * Its two hooks are its strategy; they sit beside its few declared fields.
 */
export interface ActionSubresource<T extends ObjectHeader = ObjectHeader, R extends ObjectHeader = ObjectHeader> {
  group: string;
  version: string;
  kind: string;
  schema: AnySchema;
  defaults?: (request: R) => void;
  /**
   * `cluster` reads the objects the answer depends on (a token's bound pod or secret); `self` acts on the
   * parent (an eviction deletes its pod).
   */
  answer: (parent: T, request: R, ctx: RequestContext, cluster: ClusterReader, self: ActionParent) => Promise<ObjectHeader>;
}

/** What an action may do to its parent object, as the request's caller. */
export interface ActionParent {
  /** Deletes it as a DELETE with these options does (admission, preconditions, grace, finalizers). */
  delete(options: ActionDeleteOptions, dryRun: boolean): Promise<void>;
  /**
   * Rewrites it straight in storage, as Kubernetes' subresources that call GuaranteedUpdate themselves
   * (BindingREST): no strategy, no admission. `change` gets the current object and returns the new one,
   * or throws to refuse; it runs again on the new state after a conflicting write. Preconditions that do
   * not hold are a 409, as Kubernetes' storage Preconditions.
   */
  rewrite(
    preconditions: { uid?: string; resourceVersion?: string },
    change: (current: ObjectHeader) => ObjectHeader,
    dryRun: boolean,
  ): Promise<ObjectHeader>;
}

export interface ActionDeleteOptions {
  gracePeriodSeconds?: number;
  propagationPolicy?: string;
  orphanDependents?: boolean;
  preconditions?: { uid?: string; resourceVersion?: string };
}

export type Verb = "get" | "list" | "watch" | "create" | "update" | "patch" | "delete" | "deletecollection";

/**
 * A kind's declaration, and its strategies. `T` is the type its schema decodes to; the registry and the
 * store hold every kind as `KindDefinition` (of `ObjectHeader`): see `defineKind`.
 */
export interface KindDefinition<T extends ObjectHeader = ObjectHeader> {
  group: string;
  version: string;
  kind: string;
  listKind: string;
  plural: string;
  singular: string;
  shortNames: readonly string[];
  categories: readonly string[];
  namespaced: boolean;
  verbs: readonly Verb[];
  /**
   * A custom resource served from a CustomResourceDefinition (JSON merge semantics for strategic patches;
   * printer columns give finished cells, as Kubernetes' table convertor).
   */
  custom?: boolean;
  /**
   * ObjectMeta checked by apimachinery's generic rules only, as apiextensions' kinds are: finalizer
   * names need not be Kubernetes' standard ones when unqualified.
   */
  genericMetaValidation?: boolean;
  /** Sent as a `Warning` with every request to this version (a deprecated custom resource version). */
  deprecationWarning?: string;
  /**
   * Served but left out of discovery's group lists: the self reviews under Kubernetes' group names in
   * the orch profile, for kubectl, which posts them there without asking discovery.
   */
  unlisted?: boolean;
  /** Decodes bodies: type checks, pruning, static defaults. */
  schema: AnySchema;
  /**
   * Drops, in place, what a custom resource's structural schema does not know (before `schema` decodes
   * the rest) and returns the dropped paths, reported like unknown fields under fieldValidation.
   */
  prune?: (obj: Record<string, unknown>) => string[];
  /** A custom resource version's `openAPIV3Schema` as its CRD declares it, published under /openapi. */
  openAPIV3Schema?: Readonly<Record<string, unknown>>;
  /**
   * One storage served in several versions (a custom resource with conversion `None`): objects are
   * stored with this apiVersion and read back in the version requested; nothing else changes.
   */
  storageApiVersion?: string;
  /**
   * How objects move between the versions of that storage (the CRD's `spec.conversion`). Without one,
   * or with `None`, only `apiVersion` changes, in place; `Webhook` makes every read and write of an
   * object in another version a call (see `VersionConverter`).
   */
  converter?: VersionConverter;
  /**
   * Applied to every object read from storage before anyone sees it (custom resources whose schema
   * has defaults: Kubernetes' storage decoder defaults, so a default added later shows on read).
   */
  defaultsOnRead?: (obj: ObjectHeader) => void;
  /**
   * Objects kept in another kind's storage and converted on the way in and out (events.<domain>/v1
   * Events are stored as core/v1 Events, as in Kubernetes). The strategy, columns and selectable fields
   * see this kind's shape.
   */
  storedAs?: StorageConversion;
  /**
   * How the data merges (list and struct semantics) for strategic merge and server-side apply.
   * Built-in kinds derive it from `schema` (see `kindShape`); custom resources from their CRD's schema.
   */
  shape?: Shape;
  /** PUT to a missing object creates it. */
  allowCreateOnUpdate?: boolean;
  /** Delete answers with the deleted object instead of a Status (Kubernetes' ReturnDeletedObject). */
  deleteReturnsObject?: boolean;
  /**
   * A collection whose POST is an action on another kind's object of the same group, named by the body:
   * Kubernetes' legacy `bindings` (`POST .../bindings` is `POST .../pods/{name}/binding`).
   */
  actionOn?: { plural: string; action: string };
  /** The main endpoint's behaviour. */
  strategy: Strategy<T>;
  /** Subresources served by the same store with their own strategy (`status`, `approval`). */
  subresources: Readonly<Record<string, SubresourceStrategy<T>>>;
  /** Subresources that answer a POST from the object (`token`). */
  actions?: Readonly<Record<string, ActionSubresource<T>>>;
  scale?: ScaleMapping<T>;
  /** Field selectors beyond metadata.name and metadata.namespace. */
  selectableFields: Readonly<Record<string, (obj: T) => string | undefined>>;
  printerColumns: readonly PrinterColumn<T>[];
}

/**
 * Converts custom resources between the versions of their one storage (apiextensions-apiserver's
 * crConverterInterface): `None` rewrites `apiVersion`, `Webhook` sends a ConversionReview.
 */
export interface VersionConverter {
  readonly strategy: "None" | "Webhook";
  /**
   * `objects` (each in the version its `apiVersion` names) in `apiVersion`, in the same order; those
   * already there are returned as they are. One call for all of them. Throws a StatusError when the
   * conversion fails (a webhook down, a bad answer).
   */
  convert(objects: readonly ObjectHeader[], apiVersion: string, signal?: AbortSignal): Promise<ObjectHeader[]>;
}

/** Conversion `None`: only `apiVersion` changes, nothing else is touched. */
export const noneConverter: VersionConverter = {
  strategy: "None",
  convert: async (objects, apiVersion) => objects.map((o) => (o.apiVersion === apiVersion ? o : { ...o, apiVersion })),
};

/** How a kind's objects are kept in another kind's storage. */
export interface StorageConversion {
  /** The storage resource (`core/events`). */
  resource: string;
  /** The stored object as this kind serves it. Keeps `metadata` the same object: the store writes to it. */
  fromStorage(stored: ObjectHeader): ObjectHeader;
  /** This kind's object as stored; keeps `metadata` the same object too. */
  toStorage(served: ObjectHeader): ObjectHeader;
}

/** `<group>/<plural>` (`core/<plural>` for the core group): the storage resource of a kind. */
export const storageResource = (k: Pick<KindDefinition, "group" | "plural"> & Partial<Pick<KindDefinition, "storedAs">>): string =>
  k.storedAs?.resource ?? `${k.group || "core"}/${k.plural}`;

export const apiVersionOf = (k: Pick<KindDefinition, "group" | "version">): string => (k.group ? `${k.group}/${k.version}` : k.version);

/**
 * One kind per storage, the one serving the storage version where there is one: what the apiserver's
 * own controllers read and delete through, so that no object needs converting (a webhook call) for them.
 */
export function kindPerStorage(kinds: readonly KindDefinition[]): KindDefinition[] {
  const inStorageVersion = (k: KindDefinition) => !k.storageApiVersion || k.storageApiVersion === apiVersionOf(k);
  const chosen = new Map<string, KindDefinition>();
  for (const k of kinds) {
    const held = chosen.get(storageResource(k));
    if (!held || (!inStorageVersion(held) && inStorageVersion(k))) chosen.set(storageResource(k), k);
  }
  return [...chosen.values()];
}

/** Builds a kind's full declaration for a profile. */
export type KindFactory = (profile: NamingProfile) => KindDefinition;

/** Everything but type, object metadata and status: by default, the fields whose changes bump generation. */
export function specFields(o: ObjectHeader): Record<string, unknown> {
  const { apiVersion: _a, kind: _k, metadata: _m, status: _s, ...rest } = o;
  return rest;
}

/** The merge shape of a kind's objects. */
export const kindShape = (k: Pick<KindDefinition, "shape" | "schema">): Shape => k.shape ?? shapeOf(k.schema);
