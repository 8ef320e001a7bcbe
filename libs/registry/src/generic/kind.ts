// A kind is a declaration plus a small strategy. The generic store (store.ts) does everything else;
// no kind has request-path code of its own.
import { type AnySchema, type NamingProfile, type ObjectHeader, shapeOf } from "@orch/api";
import type { FieldError, Shape } from "@orch/machinery";
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
}

/** The hooks of one endpoint (the main resource or a subresource such as `status`). */
export interface Strategy {
  /** Normalises a new object before validation (e.g. clears status, fills server-set fields). */
  prepareForCreate?(obj: ObjectHeader, ctx: RequestContext): void;
  /** Normalises an update: copy back what this endpoint may not change. */
  prepareForUpdate?(obj: ObjectHeader, old: ObjectHeader, ctx: RequestContext): void;
  validate?(obj: ObjectHeader, ctx: RequestContext): FieldError[];
  validateUpdate?(obj: ObjectHeader, old: ObjectHeader, ctx: RequestContext): FieldError[];
  warnings?(obj: ObjectHeader, old: ObjectHeader | undefined, ctx: RequestContext): string[];
  /**
   * Rules that need other objects (e.g. one default PriorityClass), run after validation and before
   * the write. Returns field errors (422) or throws a StatusError for another code.
   */
  admit?(obj: ObjectHeader, old: ObjectHeader | undefined, ctx: RequestContext, cluster: ClusterReader): Promise<FieldError[]>;
}

export interface PrinterColumn {
  name: string;
  type: "string" | "integer" | "number" | "boolean" | "date";
  /** Extracts the cell; `jsonPath` columns of custom resources compile to this. */
  value: (obj: ObjectHeader) => unknown;
  description?: string;
  format?: string;
  priority?: number;
}

/**
 * How `/scale` (an autoscaling/v1 Scale) maps onto the object: dotted paths as custom resources
 * declare them (`.spec.replicas`), and the selector as the string a Scale carries.
 */
export interface ScaleMapping {
  specReplicasPath: string;
  statusReplicasPath: string;
  /** The serialized label selector for `status.selector` (built-ins format `spec.selector`). */
  selector?: (obj: ObjectHeader) => string | undefined;
}

/** Read access to other objects, for rules that span objects (Kubernetes does these in admission). */
export interface ClusterReader {
  list(group: string, plural: string, namespace?: string): Promise<ObjectHeader[]>;
  /** One object by name (`namespace` "" when cluster-scoped); `undefined` when there is none. */
  get(group: string, plural: string, namespace: string, name: string): Promise<ObjectHeader | undefined>;
}

/**
 * A subresource answered on POST from its parent object, without storing anything (Kubernetes'
 * `serviceaccounts/token`): the request is decoded with `schema` as `group/version` `kind`.
 */
export interface ActionSubresource {
  group: string;
  version: string;
  kind: string;
  schema: AnySchema;
  defaults?: (obj: ObjectHeader) => void;
  /** `cluster` reads the objects the answer depends on (a token's bound pod or secret). */
  answer(parent: ObjectHeader, request: ObjectHeader, ctx: RequestContext, cluster: ClusterReader): Promise<ObjectHeader>;
}

export type Verb = "get" | "list" | "watch" | "create" | "update" | "patch" | "delete" | "deletecollection";

export interface KindDefinition {
  group: string;
  version: string;
  kind: string;
  listKind: string;
  plural: string;
  singular: string;
  shortNames: readonly string[];
  categories: readonly string[];
  namespaced: boolean;
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
  /** Decodes bodies: type checks, pruning, static defaults. */
  schema: AnySchema;
  /**
   * Drops, in place, what a custom resource's structural schema does not know (before `schema` decodes
   * the rest) and returns the dropped paths, reported like unknown fields under fieldValidation.
   */
  prune?: (obj: Record<string, unknown>) => string[];
  /**
   * One storage served in several versions (a custom resource with conversion `None`): objects are
   * stored with this apiVersion and read back in the version requested; nothing else changes.
   */
  storageApiVersion?: string;
  /**
   * How the data merges (list and struct semantics) for strategic merge and server-side apply.
   * Built-in kinds derive it from `schema` (see `kindShape`); custom resources from their CRD's schema.
   */
  shape?: Shape;
  /** Defaults that depend on other fields, applied after decoding. */
  defaults?: (obj: ObjectHeader) => void;
  /** The main endpoint's strategy. */
  strategy: Strategy;
  /** Subresources served by the same store with another strategy (`status`, `approval`). */
  subresources: Readonly<Record<string, Strategy>>;
  /** Subresources that answer a POST from the object (`token`). */
  actions?: Readonly<Record<string, ActionSubresource>>;
  scale?: ScaleMapping;
  /** Field selectors beyond metadata.name and metadata.namespace. */
  selectableFields: Readonly<Record<string, (obj: ObjectHeader) => string | undefined>>;
  printerColumns: readonly PrinterColumn[];
  verbs: readonly Verb[];
  /**
   * Validates `metadata.name`, or a `generateName` prefix when `prefix` is true; returns Kubernetes'
   * messages (DNS subdomain by default). Some kinds' rules depend on the object (a trust bundle's signer).
   */
  validateName?: (name: string, prefix: boolean, obj: ObjectHeader) => string[];
  /**
   * The part of an object whose changes bump `metadata.generation` (default: everything but type,
   * metadata and status — see `specFields`). A Deployment adds its annotations, as Kubernetes does.
   */
  generationSource?: (obj: ObjectHeader) => unknown;
  /** Delete answers with the deleted object instead of a Status (Kubernetes' ReturnDeletedObject). */
  deleteReturnsObject?: boolean;
  /**
   * A kind whose create is answered, not stored (reviews): the decoded, validated object goes in,
   * the answer comes out with 201; nothing is written and no event is published.
   */
  answer?: (obj: ObjectHeader, ctx: RequestContext) => Promise<ObjectHeader> | ObjectHeader;
  /** PUT to a missing object creates it. */
  allowCreateOnUpdate?: boolean;
  /** Finalizers kept outside metadata (a Namespace's `spec.finalizers`); they also hold deletion back. */
  specFinalizers?: (obj: ObjectHeader) => readonly string[];
  /**
   * Kinds with graceful deletion (pods): the grace period a delete gets, given the one requested.
   * Above 0 the object is only marked (deletionTimestamp in the future) until deleted with 0.
   */
  gracePeriod?: (obj: ObjectHeader, requested: number | undefined) => number;
  /**
   * Refuses deleting an object by name before it is read (immortal namespaces, system priority classes),
   * throwing a StatusError. Delete-collection does not ask, as in Kubernetes.
   */
  beforeDelete?: (name: string) => void;
  /**
   * Marks an object whose deletion starts (a Namespace enters Terminating); finalizers it adds hold the
   * deletion back (a CustomResourceDefinition's instance clean-up).
   */
  prepareForDelete?: (obj: ObjectHeader) => void;
}

/** `<group>/<plural>` (`core/<plural>` for the core group): the storage resource of a kind. */
export const storageResource = (k: Pick<KindDefinition, "group" | "plural">): string => `${k.group || "core"}/${k.plural}`;

export const apiVersionOf = (k: Pick<KindDefinition, "group" | "version">): string => (k.group ? `${k.group}/${k.version}` : k.version);

/** Builds a kind's full declaration for a profile. */
export type KindFactory = (profile: NamingProfile) => KindDefinition;

/** Everything but type, object metadata and status: by default, the fields whose changes bump generation. */
export function specFields(o: ObjectHeader): Record<string, unknown> {
  const { apiVersion: _a, kind: _k, metadata: _m, status: _s, ...rest } = o;
  return rest;
}

/** The merge shape of a kind's objects. */
export const kindShape = (k: Pick<KindDefinition, "shape" | "schema">): Shape => k.shape ?? shapeOf(k.schema);
