// Event (core/v1), as pkg/registry/core/event and pkg/apis/core/validation/events.go: a PUT may create
// one, any name that fits in a URL path segment will do, and validation is lenient for this version
// (legacyValidateEvent) — events.<domain>/v1 adds the strict rules over the same stored objects
// (events/event.ts). Field paths are core/v1's in both versions, as Kubernetes validates its internal type.
import { Event } from "@orch/api";
import {
  type FieldError,
  fieldError,
  fieldImmutableErrorMsg,
  humanDuration,
  isDNS1123Subdomain,
  isQualifiedName,
  jsonEqual,
  nameIsPathSegment,
} from "@orch/machinery";
import type { KindDefinition, PrinterColumn, Strategy } from "../../generic/kind.js";
import { defineKind } from "../../generic/define.js";

const REPORTING_INSTANCE_LENGTH_LIMIT = 128;
const ACTION_LENGTH_LIMIT = 128;
const REASON_LENGTH_LIMIT = 128;
const NOTE_LENGTH_LIMIT = 1024;

/** Go's zero time: unset, or `null` as Go sends a zero metav1.Time. */
const isZeroTime = (t: string | null | undefined): boolean => !t;

/** legacyValidateEvent: what every Event must satisfy, in either version. */
function legacyValidateEvent(event: Event): FieldError[] {
  const errs: FieldError[] = [];
  const namespace = event.metadata.namespace ?? "";
  const involvedNamespace = event.involvedObject.namespace ?? "";
  const mismatch = () => fieldError.invalid("involvedObject.namespace", involvedNamespace, "does not match event.namespace");
  if (isZeroTime(event.eventTime)) {
    // Events without eventTime are old ones; a cluster-scoped object's events may sit in "default".
    if (involvedNamespace === "" ? namespace !== "" && namespace !== "default" : namespace !== involvedNamespace) errs.push(mismatch());
  } else {
    if (involvedNamespace === "" && namespace !== "default" && namespace !== "kube-system") errs.push(mismatch());
    const controller = event.reportingComponent ?? "";
    if (controller === "") errs.push(fieldError.required("reportingController"));
    for (const msg of isQualifiedName(controller)) errs.push(fieldError.invalid("reportingController", controller, msg));
    const limited = (path: string, value: string | undefined, limit: number, required: boolean) => {
      if (required && !value) errs.push(fieldError.required(path));
      if ((value ?? "").length > limit) errs.push(fieldError.invalid(path, "", `can have at most ${limit} characters`));
    };
    limited("reportingInstance", event.reportingInstance, REPORTING_INSTANCE_LENGTH_LIMIT, true);
    limited("action", event.action, ACTION_LENGTH_LIMIT, true);
    limited("reason", event.reason, REASON_LENGTH_LIMIT, true);
    limited("message", event.message, NOTE_LENGTH_LIMIT, false);
  }
  for (const msg of isDNS1123Subdomain(namespace)) errs.push(fieldError.invalid("namespace", namespace, msg));
  return errs;
}

/** validateV1EventSeries. */
function validateSeries(event: Event): FieldError[] {
  if (!event.series) return [];
  const errs: FieldError[] = [];
  if ((event.series.count ?? 0) < 2) errs.push(fieldError.invalid("series.count", "", "should be at least 2"));
  if (isZeroTime(event.series.lastObservedTime)) errs.push(fieldError.required("series.lastObservedTime"));
  return errs;
}

/** ValidateEventCreate; `strict` for events.<domain>/v1 (ObjectMeta is checked by the store for every kind). */
export function validateEventCreate(event: Event, strict: boolean): FieldError[] {
  const errs = legacyValidateEvent(event);
  if (!strict) return errs;
  errs.push(...validateSeries(event));
  if (isZeroTime(event.eventTime)) errs.push(fieldError.required("eventTime"));
  if (event.type !== "Normal" && event.type !== "Warning")
    errs.push(fieldError.invalid("type", "", `has invalid value: ${event.type ?? ""}`));
  if (!isZeroTime(event.firstTimestamp)) errs.push(fieldError.invalid("firstTimestamp", "", "needs to be unset"));
  if (!isZeroTime(event.lastTimestamp)) errs.push(fieldError.invalid("lastTimestamp", "", "needs to be unset"));
  if (event.count) errs.push(fieldError.invalid("count", "", "needs to be unset"));
  if (event.source.component || event.source.host) errs.push(fieldError.invalid("source", "", "needs to be unset"));
  return errs;
}

/** A value with Go's zero values (empty strings, 0, null, empty structs) dropped, for semantic equality. */
function withoutZeros(value: unknown): unknown {
  if (value === null || value === undefined || value === "" || value === 0 || value === false) return undefined;
  if (typeof value !== "object" || Array.isArray(value)) return value;
  const kept = Object.entries(value)
    .map(([k, v]) => [k, withoutZeros(v)] as const)
    .filter(([, v]) => v !== undefined);
  return kept.length ? Object.fromEntries(kept) : undefined;
}

/** ValidateEventUpdate; after creation an event only changes in the ways the strict version allows. */
export function validateEventUpdate(event: Event, old: Event, strict: boolean): FieldError[] {
  const errs = legacyValidateEvent(event);
  if (!strict) return errs;
  if (!jsonEqual(event.series ?? null, old.series ?? null)) errs.push(...validateSeries(event));
  // Each field as Go shows its new value in the error: "" for a string, 0 for a count, null for a time.
  const immutable: [path: string, now: unknown, before: unknown, zero: unknown][] = [
    ["involvedObject", event.involvedObject, old.involvedObject, {}],
    ["reason", event.reason, old.reason, ""],
    ["message", event.message, old.message, ""],
    ["source", event.source, old.source, {}],
    ["firstTimestamp", event.firstTimestamp, old.firstTimestamp, null],
    ["lastTimestamp", event.lastTimestamp, old.lastTimestamp, null],
    ["count", event.count, old.count, 0],
    // Kubernetes checks the reason twice, and so reports it twice.
    ["reason", event.reason, old.reason, ""],
    ["type", event.type, old.type, ""],
    ["eventTime", event.eventTime, old.eventTime, null],
    ["action", event.action, old.action, ""],
    ["related", event.related, old.related, null],
    ["reportingController", event.reportingComponent, old.reportingComponent, ""],
    ["reportingInstance", event.reportingInstance, old.reportingInstance, ""],
  ];
  for (const [path, now, before, zero] of immutable) {
    if (!jsonEqual(withoutZeros(now) ?? null, withoutZeros(before) ?? null))
      errs.push(fieldError.invalid(path, now ?? zero, fieldImmutableErrorMsg));
  }
  return errs;
}

const since = (t: string | null | undefined): string => (t ? humanDuration(Date.now() - Date.parse(t)) : "<unknown>");
const firstNonEmpty = (...values: (string | undefined)[]): string => values.find((v) => v) ?? "";

/**
 * printEvent's columns (pkg/printers/internalversion): the last and first time seen from whichever of
 * the old and new timestamps is set, the count of a series, and the involved object as `kind/name`.
 * `toCore` gives the core/v1 shape of an object of the kind they are declared for.
 */
export function eventColumns<T>(toCore: (obj: T) => Event): PrinterColumn[] {
  const lastSeen = (e: Event): string => {
    if (e.series) return since(e.series.lastObservedTime);
    return e.lastTimestamp ? since(e.lastTimestamp) : firstSeen(e);
  };
  const firstSeen = (e: Event): string => (e.firstTimestamp ? since(e.firstTimestamp) : since(e.eventTime));
  const count = (e: Event): number => (e.series ? (e.series.count ?? 0) : e.count || 1);
  const object = (e: Event): string => {
    const kind = (e.involvedObject.kind ?? "").toLowerCase();
    return e.involvedObject.name ? `${kind}/${e.involvedObject.name}` : kind;
  };
  const source = (e: Event): string => {
    const component = firstNonEmpty(e.source.component, e.reportingComponent);
    const instance = firstNonEmpty(e.source.host, e.reportingInstance);
    if (!component) return "<unknown>";
    return instance ? `${component}, ${instance}` : component;
  };
  const col = (name: string, value: (e: Event) => unknown, priority = 0): PrinterColumn => ({
    name,
    type: "string",
    priority,
    value: (o) => value(toCore(o as T)),
  });
  return [
    col("Last Seen", lastSeen),
    col("Type", (e) => e.type ?? ""),
    col("Reason", (e) => e.reason ?? ""),
    col("Object", object),
    col("Subobject", (e) => e.involvedObject.fieldPath ?? "", 1),
    col("Source", source, 1),
    col("Message", (e) => (e.message ?? "").trim()),
    col("First Seen", firstSeen, 1),
    col("Count", count, 1),
    { ...col("Name", (e) => e.metadata.name ?? "", 1), format: "name" },
  ];
}

const strategy: Strategy<Event> = {
  validateName: nameIsPathSegment,
  validate: (event) => validateEventCreate(event, false),
  validateUpdate: (event, old) => validateEventUpdate(event, old, false),
};

export const events = (): KindDefinition =>
  defineKind({
    group: "",
    version: "v1",
    kind: "Event",
    plural: "events",
    shortNames: ["ev"],
    namespaced: true,
    schema: Event,
    strategy,
    allowCreateOnUpdate: true,
    selectableFields: {
      "involvedObject.kind": (e) => e.involvedObject.kind ?? "",
      "involvedObject.namespace": (e) => e.involvedObject.namespace ?? "",
      "involvedObject.name": (e) => e.involvedObject.name ?? "",
      "involvedObject.uid": (e) => e.involvedObject.uid ?? "",
      "involvedObject.apiVersion": (e) => e.involvedObject.apiVersion ?? "",
      "involvedObject.resourceVersion": (e) => e.involvedObject.resourceVersion ?? "",
      "involvedObject.fieldPath": (e) => e.involvedObject.fieldPath ?? "",
      reason: (e) => e.reason ?? "",
      reportingComponent: (e) => e.reportingComponent,
      source: (e) => e.source.component || e.reportingComponent,
      type: (e) => e.type ?? "",
    },
    printerColumns: eventColumns((e: Event) => e),
  });
