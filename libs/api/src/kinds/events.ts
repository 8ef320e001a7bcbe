// events.<domain>/v1 Event (k8s.io/api/events/v1/types.go): the newer shape of the same objects as core/v1
// Events. Kubernetes stores one kind and converts between the two (pkg/apis/events/v1/conversion.go):
// regarding ↔ involvedObject, note ↔ message, reportingController ↔ reportingComponent, and the
// deprecated* fields ↔ source, firstTimestamp, lastTimestamp and count; the rest keeps its name.
import * as v from "valibot";
import { ObjectReference, objectOf } from "../meta.js";
import { int32, microTime, opt, str } from "../schema.js";
import { type Event as CoreEvent, EventSource } from "./core.js";
import { nullableTime } from "./fields.js";
import { listOf } from "./meta-list.js";

// Both fields are required in Go but decode as zero values when absent; validation names what is missing.
export const EventsV1EventSeries = v.object({
  count: opt(int32()),
  lastObservedTime: opt(v.nullable(microTime())),
});

export const EventsV1Event = objectOf({
  eventTime: opt(v.nullable(microTime())),
  series: opt(v.nullable(EventsV1EventSeries)),
  reportingController: opt(str()),
  reportingInstance: opt(str()),
  action: opt(str()),
  reason: opt(str()),
  regarding: opt(ObjectReference, {}),
  related: opt(v.nullable(ObjectReference)),
  note: opt(str()),
  type: opt(str()),
  deprecatedSource: opt(EventSource, {}),
  deprecatedFirstTimestamp: nullableTime(),
  deprecatedLastTimestamp: nullableTime(),
  deprecatedCount: opt(int32()),
});
export type EventsV1Event = v.InferOutput<typeof EventsV1Event>;
export const EventsV1EventList = listOf(EventsV1Event);

/** Only the fields that are set: Go's `omitempty` drops empty strings and zero counts from either shape. */
function compact<T extends Record<string, unknown>>(fields: T): Partial<T> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined && value !== "" && value !== 0)) as Partial<T>;
}

/**
 * Convert_core_Event_To_v1_Event. `metadata` stays the same object, so the store's writes to it (the
 * resourceVersion of a commit) show in both shapes.
 */
export function eventFromCore(event: CoreEvent, apiVersion: string): EventsV1Event {
  return {
    apiVersion,
    kind: "Event",
    metadata: event.metadata,
    ...(event.eventTime !== undefined ? { eventTime: event.eventTime } : {}),
    ...(event.series != null ? { series: { ...event.series } } : {}),
    ...compact({
      reportingController: event.reportingComponent,
      reportingInstance: event.reportingInstance,
      action: event.action,
      reason: event.reason,
    }),
    regarding: event.involvedObject,
    ...(event.related != null ? { related: event.related } : {}),
    ...compact({ note: event.message, type: event.type }),
    deprecatedSource: event.source,
    ...(event.firstTimestamp !== undefined ? { deprecatedFirstTimestamp: event.firstTimestamp } : {}),
    ...(event.lastTimestamp !== undefined ? { deprecatedLastTimestamp: event.lastTimestamp } : {}),
    ...compact({ deprecatedCount: event.count }),
  };
}

/** Convert_v1_Event_To_core_Event; `metadata` stays the same object, as in `eventFromCore`. */
export function eventToCore(event: EventsV1Event, apiVersion = "v1"): CoreEvent {
  return {
    apiVersion,
    kind: "Event",
    metadata: event.metadata,
    involvedObject: event.regarding,
    ...compact({ reason: event.reason, message: event.note }),
    source: event.deprecatedSource,
    ...(event.deprecatedFirstTimestamp !== undefined ? { firstTimestamp: event.deprecatedFirstTimestamp } : {}),
    ...(event.deprecatedLastTimestamp !== undefined ? { lastTimestamp: event.deprecatedLastTimestamp } : {}),
    ...compact({ count: event.deprecatedCount, type: event.type }),
    ...(event.eventTime !== undefined ? { eventTime: event.eventTime } : {}),
    ...(event.series != null ? { series: { ...event.series } } : {}),
    ...compact({ action: event.action }),
    ...(event.related != null ? { related: event.related } : {}),
    reportingComponent: event.reportingController ?? "",
    reportingInstance: event.reportingInstance ?? "",
  };
}
