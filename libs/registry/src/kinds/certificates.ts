// certificates.<domain> kinds.
import { CertificateSigningRequest, ClusterTrustBundle, type NamingProfile } from "@orch/api";
import type { KindDefinition, Strategy } from "../kind.js";
import { nameIsDNSSubdomain } from "@orch/machinery";
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

/** A bundle of a signer is named `<signerName with ":" for "/">:<anything>` (ValidateClusterTrustBundleName). */
function clusterTrustBundleName(name: string, prefix: boolean, obj: object): string[] {
  const signer = signerName(obj);
  if (!signer) {
    return name.includes(":") ? ['ClusterTrustBundle without signer name must not have ":" in its name'] : nameIsDNSSubdomain(name, prefix);
  }
  const signerPrefix = `${signer.replaceAll("/", ":")}:`;
  if (!name.startsWith(signerPrefix)) {
    return [`ClusterTrustBundle for signerName ${signer} must be named with prefix ${signerPrefix}`];
  }
  return nameIsDNSSubdomain(name.slice(signerPrefix.length), prefix);
}

export const clusterTrustBundles = (p: NamingProfile): KindDefinition =>
  defineKind({
    group: p.group("certificates"),
    version: "v1beta1",
    kind: "ClusterTrustBundle",
    plural: "clustertrustbundles",
    namespaced: false,
    schema: ClusterTrustBundle,
    validateName: clusterTrustBundleName,
    selectableFields: { "spec.signerName": (o) => signerName(o) ?? "" },
    printerColumns: [column("SignerName", "string", (o) => signerName(o) ?? "<none>"), AGE],
  });
