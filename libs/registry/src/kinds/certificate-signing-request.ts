// CertificateSigningRequest (certificates.<domain>/v1, spec 2.5 and 3.1).
import { CertificateSigningRequest, type NamingProfile } from "@orch/api";
import type { KindDefinition, Strategy } from "../kind.js";
import { AGE, at, column, defineKind, statusSubresource } from "./define.js";

const signerName = (o: object) => at(o, "spec.signerName") as string | undefined;

/** The requester is whoever calls create, whatever the body claims. */
const csrMain: Strategy = {
  prepareForCreate(obj, ctx) {
    const spec = (obj.spec ??= {}) as Record<string, unknown>;
    spec.username = ctx.user.username;
    spec.uid = ctx.user.uid;
    spec.groups = ctx.user.groups;
    spec.extra = ctx.user.extra;
    for (const k of ["uid", "extra"]) if (spec[k] === undefined) delete spec[k];
  },
  prepareForUpdate(obj, old) {
    obj.spec = old.spec;
  },
};

const csrStatus = statusSubresource(csrMain);

export const certificateSigningRequests = (p: NamingProfile): KindDefinition =>
  defineKind({
    group: p.group("certificates"),
    version: "v1",
    kind: "CertificateSigningRequest",
    plural: "certificatesigningrequests",
    shortNames: ["csr"],
    namespaced: false,
    schema: CertificateSigningRequest,
    strategy: csrStatus.strategy,
    subresources: {
      status: csrStatus.status,
      // Approval is a status write limited to conditions; the rules on them come with the CSR rules.
      approval: csrStatus.status,
    },
    selectableFields: { "spec.signerName": signerName },
    printerColumns: [
      AGE,
      column("SignerName", "string", signerName),
      column("Requestor", "string", (o) => at(o, "spec.username")),
      column("RequestedDuration", "string", (o) => {
        const s = at(o, "spec.expirationSeconds") as number | undefined;
        return s === undefined ? "<none>" : `${Math.round(s / 60)}m`;
      }),
      column("Condition", "string", (o) => {
        const conds = (at(o, "status.conditions") as { type: string }[] | undefined) ?? [];
        const c = conds.map((x) => x.type);
        if (at(o, "status.certificate")) c.push("Issued");
        return c.length ? c.join(",") : "Pending";
      }),
    ],
  });
