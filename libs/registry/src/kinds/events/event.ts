// Event (events.<domain>/v1): the core/v1 Events' objects in their newer shape, as Kubernetes serves
// them from one storage (pkg/registry/events). Objects are stored as core/v1 Events and converted each
// way; validation is core/v1's with the strict rules of this version, on the core shape, so field paths
// name core/v1's fields (involvedObject, message, ...) as Kubernetes' do.
import { type Event, EventsV1Event, type NamingProfile, type ObjectHeader, eventFromCore, eventToCore } from "@orch/api";
import type { KindDefinition, Strategy } from "../../generic/kind.js";
import { defineKind } from "../../generic/define.js";
import { eventColumns, validateEventCreate, validateEventUpdate } from "../core/event.js";

export const eventsV1Events = (p: NamingProfile): KindDefinition => {
  const group = p.group("events");
  const apiVersion = `${group}/v1`;
  const toCore = (e: EventsV1Event): Event => eventToCore(e);
  const strategy: Strategy<EventsV1Event> = {
    validate: (event) => validateEventCreate(toCore(event), true),
    validateUpdate: (event, old) => validateEventUpdate(toCore(event), toCore(old), true),
  };
  return defineKind({
    group,
    version: "v1",
    kind: "Event",
    plural: "events",
    shortNames: ["ev"],
    namespaced: true,
    schema: EventsV1Event,
    strategy,
    allowCreateOnUpdate: true,
    storedAs: {
      resource: "core/events",
      fromStorage: (stored: ObjectHeader) => eventFromCore(stored as Event, apiVersion),
      toStorage: (served: ObjectHeader) => eventToCore(served as EventsV1Event),
    },
    // AddFieldLabelConversionsForEvent: this version's names for the core/v1 Event's selectable fields.
    selectableFields: {
      "regarding.kind": (e) => e.regarding.kind ?? "",
      "regarding.namespace": (e) => e.regarding.namespace ?? "",
      "regarding.name": (e) => e.regarding.name ?? "",
      "regarding.uid": (e) => e.regarding.uid ?? "",
      "regarding.apiVersion": (e) => e.regarding.apiVersion ?? "",
      "regarding.resourceVersion": (e) => e.regarding.resourceVersion ?? "",
      "regarding.fieldPath": (e) => e.regarding.fieldPath ?? "",
      reason: (e) => e.reason ?? "",
      reportingController: (e) => e.reportingController ?? "",
      source: (e) => e.deprecatedSource.component || e.reportingController || "",
      type: (e) => e.type ?? "",
    },
    printerColumns: eventColumns(toCore),
  });
};
