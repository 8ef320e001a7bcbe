// Secret (core/v1).
import { Secret, defaultSecret } from "@orch/api";
import type { KindDefinition } from "../kind.js";
import { AGE, column, defaults, defineKind } from "./define.js";

export const secrets = (): KindDefinition =>
  defineKind({
    group: "",
    version: "v1",
    kind: "Secret",
    plural: "secrets",
    namespaced: true,
    schema: Secret,
    defaults: defaults(defaultSecret),
    selectableFields: { type: (o) => o.type as string | undefined },
    printerColumns: [
      column("Type", "string", (o) => o.type),
      column("Data", "integer", (o) => Object.keys((o.data as object | undefined) ?? {}).length),
      AGE,
    ],
  });
