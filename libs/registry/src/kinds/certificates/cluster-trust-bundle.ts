// ClusterTrustBundle (certificates.<domain>/v1beta1, spec 2.6), as Kubernetes'
// pkg/registry/certificates/clustertrustbundle/strategy.go and ValidateClusterTrustBundle.
import { ClusterTrustBundle, type NamingProfile } from "@orch/api";
import { type FieldError, FieldPath, fieldError, fieldImmutableErrorMsg, goQuote, nameIsDNSSubdomain } from "@orch/machinery";
import { type PemBlock, parseCertificate, pemBlocks } from "@orch/pki";
import type { KindDefinition, Strategy } from "../../generic/kind.js";
import { validateSignerName } from "./certificates-validation.js";
import { AGE, at, column, defineKind } from "../../generic/define.js";
import { requireSignerPermission } from "./signer-authorization.js";

const signerName = (o: object) => at(o, "spec.signerName") as string | undefined;

const SIGNER_NAME = FieldPath.root("spec", "signerName");
const TRUST_BUNDLE = FieldPath.root("spec", "trustBundle");
/** certificates.MaxTrustBundleSize. */
const MAX_TRUST_BUNDLE_SIZE = 1024 * 1024;

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

/** What makes one PEM block unfit as a trust anchor, worded to follow "entry <i> ". */
function blockProblem(block: PemBlock): string | undefined {
  if (block.type !== "CERTIFICATE") return `has bad block type: ${block.type}`;
  if (Object.keys(block.headers).length > 0) return "has PEM block headers";
  let isCA: boolean;
  try {
    isCA = parseCertificate(block.der).isCA;
  } catch {
    return "does not parse as X.509";
  }
  return isCA ? undefined : "does not have the CA bit set";
}

/**
 * validateTrustBundle: header-less CERTIFICATE blocks, each one X.509 CA certificate, no two alike, at
 * least one. Entries are numbered over all blocks; the value is never echoed back.
 */
function validateTrustBundle(bundle: string): FieldError[] {
  const invalid = (detail: string) => fieldError.invalid(TRUST_BUNDLE, "<value omitted>", detail);
  // Go's len(): bytes.
  if (Buffer.byteLength(bundle) > MAX_TRUST_BUNDLE_SIZE) return [fieldError.tooLong(TRUST_BUNDLE, "", MAX_TRUST_BUNDLE_SIZE)];
  const errs: FieldError[] = [];
  const entries = new Map<string, number[]>();
  for (const [i, block] of pemBlocks(bundle).entries()) {
    const problem = blockProblem(block);
    if (problem) {
      errs.push(invalid(`entry ${i} ${problem}`));
      continue;
    }
    const der = Buffer.from(block.der).toString("base64");
    entries.set(der, [...(entries.get(der) ?? []), i]);
  }
  // A malformed block already says what is wrong: no further noise about duplicates or emptiness.
  if (errs.length > 0) return errs;
  if (entries.size === 0) return [invalid("at least one trust anchor must be provided")];
  for (const indices of entries.values()) {
    if (indices.length > 1) errs.push(invalid(`duplicate trust anchor (indices [${indices.join(" ")}])`));
  }
  return errs;
}

function validateBundle(bundle: ClusterTrustBundle, parseBundle: boolean): FieldError[] {
  const { signerName = "", trustBundle } = bundle.spec;
  return [
    ...(signerName !== "" ? validateSignerName(SIGNER_NAME, signerName) : []),
    ...(parseBundle ? validateTrustBundle(trustBundle) : []),
  ];
}

const strategy: Strategy<ClusterTrustBundle> = {
  validateName: clusterTrustBundleName,
  validate: (bundle) => validateBundle(bundle, true),
  validateUpdate(bundle, prev) {
    const signer = bundle.spec.signerName ?? "";
    return [
      // An unchanged bundle is not parsed again, so changes in the parser never lock an object.
      ...validateBundle(bundle, bundle.spec.trustBundle !== prev.spec.trustBundle),
      ...(signer !== (prev.spec.signerName ?? "") ? [fieldError.invalid(SIGNER_NAME, signer, fieldImmutableErrorMsg)] : []),
    ];
  },
  // A bundle tied to a signer takes `attest` on it (spec 2.6 rule 1; the ctbattest admission plugin).
  admit: requireSignerPermission(
    "clustertrustbundles",
    "attest",
    (bundle) => bundle.spec.signerName ?? "",
    (signer) => `user not permitted to attest for signerName ${goQuote(signer)}`,
    (bundle) => (bundle.spec.signerName ?? "") !== "",
  ),
};

export const clusterTrustBundles = (p: NamingProfile): KindDefinition =>
  defineKind({
    group: p.group("certificates"),
    version: "v1beta1",
    kind: "ClusterTrustBundle",
    plural: "clustertrustbundles",
    namespaced: false,
    schema: ClusterTrustBundle,
    strategy,
    selectableFields: { "spec.signerName": (o) => signerName(o) ?? "" },
    printerColumns: [column("SignerName", "string", (o) => signerName(o) ?? "<none>"), AGE],
  });
