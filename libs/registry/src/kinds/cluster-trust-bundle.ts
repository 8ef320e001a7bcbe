// ClusterTrustBundle (certificates.<domain>/v1beta1, spec 2.6).
import { ClusterTrustBundle, type NamingProfile } from "@orch/api";
import { nameIsDNSSubdomain } from "@orch/machinery";
import type { KindDefinition } from "../kind.js";
import { AGE, at, column, defineKind } from "./define.js";

const signerName = (o: object) => at(o, "spec.signerName") as string | undefined;

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
