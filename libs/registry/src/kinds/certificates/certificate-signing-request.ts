// CertificateSigningRequest (certificates.<domain>/v1, spec 2.5 and 3.1), as Kubernetes'
// pkg/registry/certificates/certificates/strategy.go and pkg/apis/certificates/validation: three
// endpoints over one object. The main one sets the spec once (the requester from the caller) and never
// changes it or the status; `/approval` writes the conditions; `/status` writes the certificate and the
// other conditions but keeps Approved/Denied.
import { CertificateSigningRequest, type NamingProfile } from "@orch/api";
import {
  type FieldError,
  FieldPath,
  fieldError,
  goBase64Error,
  goQuote,
  humanDuration,
  jsonEqual,
  nameIsPathSegment,
  rfc3339,
} from "@orch/machinery";
import { KEY_USAGES, wellKnownSignerRefusal } from "@orch/pki";
import type { KindDefinition, Strategy, SubresourceStrategy } from "../../generic/kind.js";
import { certificateError, parseRequest, sameBytes, validateSignerName } from "./certificates-validation.js";
import { AGE, at, column, defineKind } from "../../generic/define.js";
import { requireSignerPermission } from "./signer-authorization.js";

type Csr = CertificateSigningRequest;
type Condition = NonNullable<Csr["status"]["conditions"]>[number];

const signerName = (o: object) => at(o, "spec.signerName") as string | undefined;

const SPEC = FieldPath.root("spec");
const CONDITIONS = FieldPath.root("status", "conditions");
const CERTIFICATE = FieldPath.root("status", "certificate");

/** Kubernetes' allValidUsages, in the sorted order its "supported values" list prints. */
const VALID_USAGES: readonly string[] = [...KEY_USAGES].sort();
/** Condition types whose only allowed status is True. */
const TRUE_ONLY = ["Approved", "Denied", "Failed"];
const ANY_STATUS = ["False", "True", "Unknown"];

// ---- validation -----------------------------------------------------------------------------------

/**
 * What may change or be tolerated (Kubernetes' certificateValidationOptions). The `allowSetting*` flags
 * belong to the subresources; the others tolerate what the stored object already has, so that tighter
 * rules never lock an old object.
 */
interface Options {
  allowSettingApprovalConditions: boolean;
  allowSettingCertificate: boolean;
  allowBothApprovedAndDenied: boolean;
  allowLegacySignerName: boolean;
  allowDuplicateConditionTypes: boolean;
  allowEmptyConditionType: boolean;
  allowArbitraryCertificate: boolean;
  allowUnknownUsages: boolean;
  allowDuplicateUsages: boolean;
}

const conditionsOf = (csr: Csr | undefined): Condition[] => csr?.status?.conditions ?? [];
const ofType = (csr: Csr | undefined, type: string) => conditionsOf(csr).filter((c) => c.type === type);
const hasDuplicates = (xs: readonly string[]) => new Set(xs).size !== xs.length;

function optionsFor(csr: Csr, old: Csr | undefined, profile: NamingProfile): Options {
  const oldUsages = old?.spec.usages ?? [];
  const oldTypes = conditionsOf(old).map((c) => c.type);
  return {
    allowSettingApprovalConditions: false,
    allowSettingCertificate: false,
    allowBothApprovedAndDenied: oldTypes.includes("Approved") && oldTypes.includes("Denied"),
    allowLegacySignerName: old?.spec.signerName === profile.signers.legacyUnknown,
    allowDuplicateConditionTypes: hasDuplicates(oldTypes),
    allowEmptyConditionType: oldTypes.includes(""),
    // An update that leaves the certificate alone is not re-parsed.
    allowArbitraryCertificate:
      old !== undefined &&
      (sameBytes(csr.status?.certificate, old.status?.certificate) || certificateError(old.status?.certificate) !== undefined),
    allowUnknownUsages: oldUsages.some((u) => !VALID_USAGES.includes(u)),
    allowDuplicateUsages: hasDuplicates(oldUsages),
  };
}

function validateConditions(csr: Csr, o: Options): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  let approved = false;
  let denied = false;
  conditionsOf(csr).forEach((c, i) => {
    const at = CONDITIONS.index(i);
    if (!o.allowEmptyConditionType && c.type === "") errs.push(fieldError.required(at.child("type")));
    const allowed = TRUE_ONLY.includes(c.type) ? ["True"] : ANY_STATUS;
    if (c.status === "") errs.push(fieldError.required(at.child("status")));
    else if (!allowed.includes(c.status)) errs.push(fieldError.notSupported(at.child("status"), c.status, allowed));
    if (!o.allowBothApprovedAndDenied) {
      if (c.type === "Approved") approved = true;
      if (c.type === "Denied") denied = true;
      if ((c.type === "Approved" && denied) || (c.type === "Denied" && approved)) {
        errs.push(fieldError.invalid(at.child("type"), c.type, "Approved and Denied conditions are mutually exclusive"));
      }
    }
    if (!o.allowDuplicateConditionTypes) {
      if (seen.has(c.type)) errs.push(fieldError.duplicate(at.child("type"), c.type));
      seen.add(c.type);
    }
  });
  return errs;
}

type ParsedRequest = ReturnType<typeof parseRequest>;

/** validateCertificateSigningRequest: the whole object, on every endpoint. */
function validateCsr(csr: Csr, o: Options, profile: NamingProfile, request: ParsedRequest = parseRequest(csr.spec.request)): FieldError[] {
  const errs: FieldError[] = [];
  const { spec } = csr;
  if ("error" in request) errs.push(fieldError.invalid(SPEC.child("request"), spec.request, request.error));
  const usages = spec.usages ?? [];
  if (usages.length === 0) errs.push(fieldError.required(SPEC.child("usages")));
  if (!o.allowUnknownUsages) {
    usages.forEach((u, i) => {
      if (!VALID_USAGES.includes(u)) errs.push(fieldError.notSupported(SPEC.child("usages").index(i), u, VALID_USAGES));
    });
  }
  if (!o.allowDuplicateUsages) {
    usages.forEach((u, i) => {
      if (usages.indexOf(u) < i) errs.push(fieldError.duplicate(SPEC.child("usages").index(i), u));
    });
  }
  if (!o.allowLegacySignerName && spec.signerName === profile.signers.legacyUnknown) {
    errs.push(fieldError.invalid(SPEC.child("signerName"), spec.signerName, "the legacy signerName is not allowed via this API version"));
  } else {
    errs.push(...validateSignerName(SPEC.child("signerName"), spec.signerName));
  }
  if (spec.expirationSeconds !== undefined && spec.expirationSeconds < 600) {
    errs.push(
      fieldError.invalid(
        SPEC.child("expirationSeconds"),
        spec.expirationSeconds,
        "may not specify a duration less than 600 seconds (10 minutes)",
      ),
    );
  }
  errs.push(...validateConditions(csr, o));
  if (!o.allowArbitraryCertificate) {
    const error = certificateError(csr.status?.certificate);
    if (error) errs.push(fieldError.invalid(CERTIFICATE, "<certificate data>", error));
  }
  return errs;
}

/** On create only: what the well-known signer named would refuse to sign (@orch/pki wellKnownSignerRefusal). */
function validateForSigner(csr: Csr, request: ParsedRequest, profile: NamingProfile): FieldError[] {
  if (!("csr" in request)) return [];
  const usages = csr.spec.usages ?? [];
  const refusal = wellKnownSignerRefusal(profile.signers, profile.nodes, csr.spec.signerName, request.csr, usages);
  if (!refusal) return [];
  const value = refusal.field === "request" ? csr.spec.request : usages;
  return [fieldError.invalid(SPEC.child(refusal.field), value, refusal.message)];
}

/** validateCertificateSigningRequestUpdate: the object, then what this endpoint may change. */
function validateCsrUpdate(csr: Csr, old: Csr, o: Options, profile: NamingProfile): FieldError[] {
  const errs = validateCsr(csr, o, profile);
  for (const type of ["Approved", "Denied", "Failed"]) {
    if (ofType(csr, type).length < ofType(old, type).length) {
      errs.push(fieldError.forbidden(CONDITIONS, `updates may not remove a condition of type ${goQuote(type)}`));
    }
  }
  if (!o.allowSettingApprovalConditions) {
    for (const type of ["Approved", "Denied"]) {
      const [now, before] = [ofType(csr, type), ofType(old, type)];
      if (now.length > before.length) {
        errs.push(fieldError.forbidden(CONDITIONS, `updates may not add a condition of type ${goQuote(type)}`));
      } else if (now.length === before.length && !jsonEqual(now, before)) {
        // Unreachable through the strategies below (they copy these conditions back); Kubernetes also
        // appends a cmp.Diff of the two lists here.
        errs.push(fieldError.forbidden(CONDITIONS, `updates may not modify a condition of type ${goQuote(type)}`));
      }
    }
  }
  if (!sameBytes(csr.status?.certificate, old.status?.certificate)) {
    if (!o.allowSettingCertificate) {
      errs.push(fieldError.forbidden(CERTIFICATE, "updates may not set certificate content"));
    } else if (old.status?.certificate) {
      errs.push(fieldError.forbidden(CERTIFICATE, "updates may not modify existing certificate content"));
    }
  }
  return errs;
}

// ---- preparing an update ---------------------------------------------------------------------------

const isZeroTime = (t: string | null | undefined) => !t || t === "0001-01-01T00:00:00Z";

/**
 * populateConditionTimestamps: an unset lastUpdateTime is now; an unset lastTransitionTime is kept from
 * the stored condition of the same type and status, or now when the condition is new or changed status.
 */
function populateConditionTimestamps(csr: Csr, old: Csr): void {
  const now = rfc3339();
  for (const c of conditionsOf(csr)) {
    if (isZeroTime(c.lastUpdateTime)) c.lastUpdateTime = now;
    if (isZeroTime(c.lastTransitionTime)) {
      const same = conditionsOf(old).find((p) => p.type === c.type && p.status === c.status && !isZeroTime(p.lastTransitionTime));
      c.lastTransitionTime = same?.lastTransitionTime ?? now;
    }
  }
}

/**
 * preserveConditionInstances: the stored conditions of `type` replace the sent ones, index for index,
 * when there are as many; adding or removing them is left for validation to refuse.
 */
function preserveConditions(csr: Csr, old: Csr, type: string): void {
  const indices = (x: Csr) => conditionsOf(x).flatMap((c, i) => (c.type === type ? [i] : []));
  const [before, now] = [indices(old), indices(csr)];
  if (before.length !== now.length) return;
  now.forEach((n, i) => {
    conditionsOf(csr)[n] = structuredClone(conditionsOf(old)[before[i]!]!);
  });
}

const clone = structuredClone;

// ---- the three endpoints -------------------------------------------------------------------------

const main: Strategy<Csr> = {
  // spec.request and status.certificate are `[]byte`: text that is not base64 fails decoding (400).
  fromVersioned: (csr) => goBase64Error(csr.spec?.request ?? "") ?? goBase64Error(csr.status?.certificate ?? ""),
  // "We don't care what you call your certificate requests": only the generic path-segment rule.
  validateName: nameIsPathSegment,
  prepareForCreate(csr, ctx) {
    // The requester is whoever calls create, whatever the body claims; empty values are omitted as Go's omitempty does.
    const { username, uid, groups, extra } = ctx.user;
    const { spec } = csr;
    for (const k of ["username", "uid", "groups", "extra"] as const) delete spec[k];
    if (username) spec.username = username;
    if (uid) spec.uid = uid;
    if (groups.length > 0) spec.groups = [...groups];
    if (extra && Object.keys(extra).length > 0) spec.extra = clone(extra);
    // Be explicit that nobody creates a pre-approved (or pre-issued) request.
    csr.status = {};
  },
  prepareForUpdate(csr, prev) {
    // Immutable after create, except through the subresources: changes are dropped, not refused.
    csr.spec = clone(prev.spec);
    csr.status = clone(prev.status);
  },
  validate(csr, ctx) {
    const request = parseRequest(csr.spec.request);
    return [
      ...validateCsr(csr, optionsFor(csr, undefined, ctx.profile), ctx.profile, request),
      ...validateForSigner(csr, request, ctx.profile),
    ];
  },
  validateUpdate: (obj, old, ctx) => validateCsrUpdate(obj, old, optionsFor(obj, old, ctx.profile), ctx.profile),
};

/** `/status`: the signer's endpoint. Sets the certificate and conditions other than Approved/Denied. */
const status: SubresourceStrategy<Csr> = {
  prepareForUpdate(csr, prev) {
    csr.spec = clone(prev.spec);
    csr.status ??= {};
    preserveConditions(csr, prev, "Approved");
    preserveConditions(csr, prev, "Denied");
    populateConditionTimestamps(csr, prev);
  },
  validateUpdate: (csr, prev, ctx) =>
    validateCsrUpdate(csr, prev, { ...optionsFor(csr, prev, ctx.profile), allowSettingCertificate: true }, ctx.profile),
  // Writing the certificate takes `sign` on the signer (the signing admission plugin).
  admit: requireSignerPermission(
    "certificatesigningrequests",
    "sign",
    (_obj, old) => old!.spec.signerName,
    (signer) => `user not permitted to sign requests with signerName ${goQuote(signer)}`,
    (obj, old) => !sameBytes(obj.status?.certificate, old!.status?.certificate),
  ),
};

/** `/approval`: the approver's endpoint. Writes the conditions and nothing else. */
const approval: SubresourceStrategy<Csr> = {
  prepareForUpdate(csr, prev) {
    populateConditionTimestamps(csr, prev);
    const conditions = csr.status?.conditions;
    csr.spec = clone(prev.spec);
    csr.status = clone(prev.status ?? {});
    if (conditions) csr.status.conditions = conditions;
    else delete csr.status.conditions;
  },
  validateUpdate: (csr, prev, ctx) =>
    validateCsrUpdate(csr, prev, { ...optionsFor(csr, prev, ctx.profile), allowSettingApprovalConditions: true }, ctx.profile),
  // Approving or denying takes `approve` on the signer the stored request names (the approval admission plugin).
  admit: requireSignerPermission(
    "certificatesigningrequests",
    "approve",
    (_obj, old) => old!.spec.signerName,
    (signer) => `user not permitted to approve requests with signerName ${goQuote(signer)}`,
  ),
};

export const certificateSigningRequests = (p: NamingProfile): KindDefinition =>
  defineKind({
    group: p.group("certificates"),
    version: "v1",
    kind: "CertificateSigningRequest",
    plural: "certificatesigningrequests",
    shortNames: ["csr"],
    namespaced: false,
    schema: CertificateSigningRequest,
    strategy: main,
    subresources: { status, approval },
    selectableFields: { "spec.signerName": signerName },
    printerColumns: [
      AGE,
      column("SignerName", "string", signerName),
      column("Requestor", "string", (o) => at(o, "spec.username")),
      column("RequestedDuration", "string", (o) => {
        const s = at(o, "spec.expirationSeconds") as number | undefined;
        return s === undefined ? "<none>" : humanDuration(s * 1000);
      }),
      column("Condition", "string", (o) => {
        const conds = (at(o, "status.conditions") as { type: string }[] | undefined) ?? [];
        const c = conds.map((x) => x.type);
        if (at(o, "status.certificate")) c.push("Issued");
        return c.length ? c.join(",") : "Pending";
      }),
    ],
  });
