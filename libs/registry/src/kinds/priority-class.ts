// PriorityClass (scheduling.<domain>/v1, spec 2.10).
import { type NamingProfile, PriorityClass } from "@orch/api";
import type { KindDefinition } from "../kind.js";
import { AGE, column, defineKind } from "./define.js";

export const priorityClasses = (p: NamingProfile): KindDefinition =>
  defineKind({
    group: p.group("scheduling"),
    version: "v1",
    kind: "PriorityClass",
    plural: "priorityclasses",
    shortNames: ["pc"],
    namespaced: false,
    schema: PriorityClass,
    printerColumns: [
      column("Value", "integer", (o) => o.value),
      column("Global-Default", "boolean", (o) => o.globalDefault ?? false),
      AGE,
      column("PreemptionPolicy", "string", (o) => o.preemptionPolicy),
    ],
  });
