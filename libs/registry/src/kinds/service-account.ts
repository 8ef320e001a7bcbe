// ServiceAccount (core/v1, spec 2.1).
import { ServiceAccount } from "@orch/api";
import type { KindDefinition } from "../kind.js";
import { AGE, column, defineKind } from "./define.js";

export const serviceAccounts = (): KindDefinition =>
  defineKind({
    group: "",
    version: "v1",
    kind: "ServiceAccount",
    plural: "serviceaccounts",
    shortNames: ["sa"],
    namespaced: true,
    schema: ServiceAccount,
    deleteReturnsObject: true,
    printerColumns: [column("Secrets", "integer", (o) => ((o.secrets as unknown[] | undefined) ?? []).length), AGE],
  });
