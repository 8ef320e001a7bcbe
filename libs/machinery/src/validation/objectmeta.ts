// ObjectMeta validation on create and update, as k8s.io/apimachinery/pkg/api/validation (v0.36)
// ValidateObjectMetaAccessor / ValidateObjectMetaAccessorUpdate, with the same paths, order and texts.
// Kubernetes leaves some paths unindexed (labels, annotations, finalizers, ownerReferences report the
// list or map itself); so do we. It has no self-reference rule for ownerReferences; neither do we.
import { type FieldError, FieldPath, fieldError } from "./field-errors.js";
import { goQuote, isGoPrintable } from "../values/go-format.js";
import { type NameValidator, isQualifiedName, isValidLabelValue, nameIsDNSSubdomain, validateNamespaceName } from "./names.js";
import { compareUtf8 } from "../values/utf8.js";

export interface OwnerReferenceLike {
  apiVersion?: string;
  kind?: string;
  name?: string;
  uid?: string;
  controller?: boolean | null;
  blockOwnerDeletion?: boolean | null;
}

export interface ManagedFieldsEntryLike {
  manager?: string;
  operation?: string;
  apiVersion?: string;
  time?: string | null;
  fieldsType?: string;
  subresource?: string;
}

/** The parts of metav1.ObjectMeta that validation reads, in their JSON form. */
export interface ObjectMetaLike {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string | null;
  deletionTimestamp?: string | null;
  deletionGracePeriodSeconds?: number | null;
  labels?: Readonly<Record<string, string>> | null;
  annotations?: Readonly<Record<string, string>> | null;
  finalizers?: readonly string[] | null;
  ownerReferences?: readonly OwnerReferenceLike[] | null;
  managedFields?: readonly ManagedFieldsEntryLike[] | null;
}

export const fieldImmutableErrorMsg = "field is immutable";
export const isNegativeErrorMsg = "must be greater than or equal to 0";
/** 256 KiB for all annotation keys and values together, counted in bytes. */
export const totalAnnotationSizeLimitBytes = 256 * 1024;
export const finalizerOrphanDependents = "orphan";
export const finalizerDeleteDependents = "foregroundDeletion";
/** The finalizer names core kinds accept without a domain prefix. */
export const standardFinalizers: ReadonlySet<string> = new Set(["kubernetes", finalizerOrphanDependents, finalizerDeleteDependents]);

const metadataPath = FieldPath.root("metadata");
const entries = (m: Readonly<Record<string, string>> | null | undefined) => (m ? Object.entries(m) : []);

/** ValidateNonnegativeField. */
export function validateNonnegativeField(value: number, path: FieldPath): FieldError[] {
  return value < 0 ? [fieldError.invalid(path, value, isNegativeErrorMsg)] : [];
}

/** v1validation.ValidateLabels: each bad key or value reported at the labels path itself. */
export function validateLabels(labels: ObjectMetaLike["labels"], path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  for (const [k, v] of entries(labels)) {
    for (const msg of isQualifiedName(k)) errs.push(fieldError.invalid(path, k, msg));
    for (const msg of isValidLabelValue(v)) errs.push(fieldError.invalid(path, v, msg));
  }
  return errs;
}

/** ValidateAnnotations: keys are qualified names ignoring case; total size at most 256 KiB. */
export function validateAnnotations(annotations: ObjectMetaLike["annotations"], path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  let size = 0;
  for (const [k, v] of entries(annotations)) {
    for (const msg of isQualifiedName(k.toLowerCase())) errs.push(fieldError.invalid(path, k, msg));
    size += Buffer.byteLength(k) + Buffer.byteLength(v);
  }
  if (size > totalAnnotationSizeLimitBytes) errs.push(fieldError.tooLong(path, "", totalAnnotationSizeLimitBytes));
  return errs;
}

/** schema.ParseGroupVersion, which fails only on more than one slash. */
function parseGroupVersion(gv: string): { group: string; version: string } | undefined {
  if (gv === "" || gv === "/") return { group: "", version: "" };
  const slashes = gv.split("/").length - 1;
  if (slashes === 0) return { group: "", version: gv };
  if (slashes === 1) {
    const i = gv.indexOf("/");
    return { group: gv.slice(0, i), version: gv.slice(i + 1) };
  }
  return undefined;
}

// Kinds that may not own anything: Events are garbage collected on their own schedule.
const bannedOwners = new Set(["/v1, Kind=Event"]);

/** An OwnerReference as Go marshals it: fields in struct order, unset pointers omitted. */
function ownerReferenceJSON(r: OwnerReferenceLike): Record<string, unknown> {
  return {
    apiVersion: r.apiVersion ?? "",
    kind: r.kind ?? "",
    name: r.name ?? "",
    uid: r.uid ?? "",
    ...(r.controller != null ? { controller: r.controller } : {}),
    ...(r.blockOwnerDeletion != null ? { blockOwnerDeletion: r.blockOwnerDeletion } : {}),
  };
}

function validateOwnerReference(r: OwnerReferenceLike, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const gv = parseGroupVersion(r.apiVersion ?? "") ?? { group: "", version: "" };
  const kind = r.kind ?? "";
  if (gv.version === "") {
    errs.push(fieldError.invalid(path.child("apiVersion"), r.apiVersion ?? "", "version must not be empty"));
  }
  if (kind === "") errs.push(fieldError.invalid(path.child("kind"), kind, "must not be empty"));
  if (!r.name) errs.push(fieldError.invalid(path.child("name"), r.name ?? "", "must not be empty"));
  if (!r.uid) errs.push(fieldError.invalid(path.child("uid"), r.uid ?? "", "must not be empty"));
  const gvk = `${gv.group}/${gv.version}, Kind=${kind}`;
  if (bannedOwners.has(gvk)) {
    errs.push(fieldError.invalid(path, ownerReferenceJSON(r), `${gvk} is disallowed from being an owner`));
  }
  return errs;
}

/** ValidateOwnerReferences: each reference complete, and at most one controller. */
export function validateOwnerReferences(refs: ObjectMetaLike["ownerReferences"], path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  let firstController = "";
  for (const ref of refs ?? []) {
    errs.push(...validateOwnerReference(ref, path));
    if (ref.controller === true) {
      const current = `${ref.kind ?? ""}/${ref.name ?? ""}`;
      if (firstController !== "") {
        errs.push(
          fieldError.invalid(
            path,
            (refs ?? []).map(ownerReferenceJSON),
            `Only one reference can have Controller set to true. Found "true" in references for ${firstController} and ${current}`,
          ),
        );
      } else firstController = current;
    }
  }
  return errs;
}

/** ValidateFinalizerName: a qualified name. */
export function validateFinalizerName(name: string, path: FieldPath): FieldError[] {
  return isQualifiedName(name).map((msg) => fieldError.invalid(path, name, msg));
}

/** ValidateFinalizers: names, and not both orphan and foregroundDeletion. */
export function validateFinalizers(finalizers: ObjectMetaLike["finalizers"], path: FieldPath): FieldError[] {
  const list = finalizers ?? [];
  const errs = list.flatMap((f) => validateFinalizerName(f, path));
  if (list.includes(finalizerOrphanDependents) && list.includes(finalizerDeleteDependents)) {
    errs.push(fieldError.invalid(path, list, `finalizer ${finalizerOrphanDependents} and ${finalizerDeleteDependents} cannot be both set`));
  }
  return errs;
}

/**
 * validateKubeFinalizerName (pkg/apis/core/validation): core kinds also require an unprefixed finalizer
 * to be one of the standard ones. Reported per index, unlike the generic checks.
 */
export function validateKubeFinalizers(finalizers: ObjectMetaLike["finalizers"], path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  (finalizers ?? []).forEach((f, i) => {
    if (!f.includes("/") && !standardFinalizers.has(f)) {
      const detail = "name is neither a standard finalizer name nor is it fully qualified";
      errs.push(fieldError.invalid(path.index(i), f, detail));
    }
  });
  return errs;
}

const fieldManagerMaxLength = 128;
const maxSubresourceNameLength = 256;

/** Go's %#U for a non-printable rune: U+ and at least four upper-case hex digits. */
const goRuneU = (cp: number) => `U+${cp.toString(16).toUpperCase().padStart(4, "0")}`;

/** v1validation.ValidateManagedFields. */
export function validateManagedFields(list: ObjectMetaLike["managedFields"], path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  (list ?? []).forEach((entry, i) => {
    const at = path.index(i);
    const operation = entry.operation ?? "";
    if (operation !== "Apply" && operation !== "Update") {
      errs.push(fieldError.invalid(at.child("operation"), operation, "must be `Apply` or `Update`"));
    }
    if (entry.fieldsType && entry.fieldsType !== "FieldsV1") {
      errs.push(fieldError.invalid(at.child("fieldsType"), entry.fieldsType, "must be `FieldsV1`"));
    }
    const manager = entry.manager ?? "";
    if (Buffer.byteLength(manager) > fieldManagerMaxLength) {
      errs.push(fieldError.tooLong(at.child("manager"), "", fieldManagerMaxLength));
    }
    // Positions are byte offsets, as Go ranges over a string.
    let offset = 0;
    for (const ch of manager) {
      const cp = ch.codePointAt(0) ?? 0;
      if (!isGoPrintable(cp)) {
        const detail = `invalid character ${goRuneU(cp)} (at position ${offset})`;
        errs.push(fieldError.invalid(at.child("manager"), manager, detail));
      }
      offset += Buffer.byteLength(ch);
    }
    if (Buffer.byteLength(entry.subresource ?? "") > maxSubresourceNameLength) {
      errs.push(fieldError.tooLong(at.child("subresource"), "", maxSubresourceNameLength));
    }
  });
  return errs;
}

export interface ObjectMetaValidationOptions {
  /** Whether the kind is namespaced: namespace then required, otherwise forbidden. */
  namespaced: boolean;
  /** Rule for name and generateName; DNS subdomain by default. */
  nameValidator?: NameValidator;
  /** Where metadata sits; `metadata` by default. */
  path?: FieldPath;
  /** Apply core kinds' extra rule that unprefixed finalizers be standard ones (off for custom resources). */
  kubeFinalizers?: boolean;
}

function validateCommon(meta: ObjectMetaLike, namespaced: boolean, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const namespace = meta.namespace ?? "";
  if (namespaced) {
    if (namespace === "") errs.push(fieldError.required(path.child("namespace")));
    else {
      for (const msg of validateNamespaceName(namespace, false)) {
        errs.push(fieldError.invalid(path.child("namespace"), namespace, msg));
      }
    }
  } else if (namespace !== "") {
    errs.push(fieldError.forbidden(path.child("namespace"), "not allowed on this type"));
  }
  errs.push(...validateNonnegativeField(meta.generation ?? 0, path.child("generation")));
  errs.push(...validateLabels(meta.labels, path.child("labels")));
  errs.push(...validateAnnotations(meta.annotations, path.child("annotations")));
  errs.push(...validateOwnerReferences(meta.ownerReferences, path.child("ownerReferences")));
  errs.push(...validateFinalizers(meta.finalizers, path.child("finalizers")));
  errs.push(...validateManagedFields(meta.managedFields, path.child("managedFields")));
  return errs;
}

/**
 * ValidateObjectMetaAccessor (create). Like Kubernetes it expects generateName to have been turned into
 * a name already: an empty name is "name or generateName is required" even when generateName is set,
 * and generateName itself is checked with the validator's prefix rule.
 */
export function validateObjectMeta(meta: ObjectMetaLike, options: ObjectMetaValidationOptions): FieldError[] {
  const path = options.path ?? metadataPath;
  const nameFn = options.nameValidator ?? nameIsDNSSubdomain;
  const errs: FieldError[] = [];
  const generateName = meta.generateName ?? "";
  if (generateName !== "") {
    for (const msg of nameFn(generateName, true)) {
      errs.push(fieldError.invalid(path.child("generateName"), generateName, msg));
    }
  }
  const name = meta.name ?? "";
  if (name === "") errs.push(fieldError.required(path.child("name"), "name or generateName is required"));
  else for (const msg of nameFn(name, false)) errs.push(fieldError.invalid(path.child("name"), name, msg));
  errs.push(...validateCommon(meta, options.namespaced, path));
  if (options.kubeFinalizers) errs.push(...validateKubeFinalizers(meta.finalizers, path.child("finalizers")));
  return errs;
}

/** How metav1.Time marshals: RFC 3339 in UTC, whole seconds; unset is null. */
function timeValue(t: string | null | undefined): string | null {
  if (!t) return null;
  const ms = Date.parse(t);
  return Number.isNaN(ms) ? t : new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(".000Z", "Z");
}

/** metav1.Time compares as an instant (Semantic.DeepEqual uses UTC()); unset equals the zero time. */
function sameTime(a: string | null | undefined, b: string | null | undefined): boolean {
  if (!a || !b) return !a && !b;
  const x = Date.parse(a);
  const y = Date.parse(b);
  return Number.isNaN(x) || Number.isNaN(y) ? a === b : x === y;
}

/** ValidateNoNewFinalizers: an object being deleted may lose finalizers but not gain them. */
export function validateNoNewFinalizers(
  newFinalizers: ObjectMetaLike["finalizers"],
  oldFinalizers: ObjectMetaLike["finalizers"],
  path: FieldPath,
): FieldError[] {
  const old = new Set(oldFinalizers ?? []);
  const extra = [...new Set((newFinalizers ?? []).filter((f) => !old.has(f)))].sort(compareUtf8);
  if (extra.length === 0) return [];
  // Go prints the sorted set with %#v: []string{"a", "b"}.
  const shown = `[]string{${extra.map(goQuote).join(", ")}}`;
  const detail = `no new finalizers can be added if the object is being deleted, found new finalizers ${shown}`;
  return [fieldError.forbidden(path, detail)];
}

const immutable = (changed: boolean, path: FieldPath, value: unknown): FieldError[] =>
  changed ? [fieldError.invalid(path, value, fieldImmutableErrorMsg)] : [];

/**
 * ValidateObjectMetaAccessorUpdate. Note Kubernetes checks finalizer names only on create (unless
 * kubeFinalizers), and reports an immutable field with its new value (`null` when cleared).
 */
export function validateObjectMetaUpdate(
  newMeta: ObjectMetaLike,
  oldMeta: ObjectMetaLike,
  options: Pick<ObjectMetaValidationOptions, "path" | "kubeFinalizers"> = {},
): FieldError[] {
  const path = options.path ?? metadataPath;
  const errs: FieldError[] = [];
  if (oldMeta.deletionTimestamp) {
    errs.push(...validateNoNewFinalizers(newMeta.finalizers, oldMeta.finalizers, path.child("finalizers")));
  }
  if (!newMeta.resourceVersion) {
    const rv = newMeta.resourceVersion ?? "";
    errs.push(fieldError.invalid(path.child("resourceVersion"), rv, "must be specified for an update"));
  }
  const generation = newMeta.generation ?? 0;
  if (generation < (oldMeta.generation ?? 0)) {
    errs.push(fieldError.invalid(path.child("generation"), generation, "must not be decremented"));
  }
  for (const field of ["name", "namespace", "uid"] as const) {
    const value = newMeta[field] ?? "";
    errs.push(...immutable(value !== (oldMeta[field] ?? ""), path.child(field), value));
  }
  errs.push(
    ...immutable(
      !sameTime(newMeta.creationTimestamp, oldMeta.creationTimestamp),
      path.child("creationTimestamp"),
      timeValue(newMeta.creationTimestamp),
    ),
  );
  errs.push(
    ...immutable(
      !sameTime(newMeta.deletionTimestamp, oldMeta.deletionTimestamp),
      path.child("deletionTimestamp"),
      timeValue(newMeta.deletionTimestamp),
    ),
  );
  errs.push(
    ...immutable(
      (newMeta.deletionGracePeriodSeconds ?? null) !== (oldMeta.deletionGracePeriodSeconds ?? null),
      path.child("deletionGracePeriodSeconds"),
      newMeta.deletionGracePeriodSeconds ?? null,
    ),
  );
  errs.push(...validateLabels(newMeta.labels, path.child("labels")));
  errs.push(...validateAnnotations(newMeta.annotations, path.child("annotations")));
  errs.push(...validateOwnerReferences(newMeta.ownerReferences, path.child("ownerReferences")));
  errs.push(...validateManagedFields(newMeta.managedFields, path.child("managedFields")));
  if (options.kubeFinalizers) errs.push(...validateKubeFinalizers(newMeta.finalizers, path.child("finalizers")));
  return errs;
}
