// DeviceClass (resource.<domain>/v1, spec 2.7).
import { DeviceClass, type NamingProfile } from "@orch/api";
import type { KindDefinition } from "../kind.js";
import { defineKind } from "./define.js";

export const deviceClasses = (p: NamingProfile): KindDefinition =>
  defineKind({
    group: p.group("resource"),
    version: "v1",
    kind: "DeviceClass",
    plural: "deviceclasses",
    namespaced: false,
    schema: DeviceClass,
    deleteReturnsObject: true,
  });
