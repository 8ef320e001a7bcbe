// TokenRequest (authentication.<domain>/v1, spec 2.2): `POST .../serviceaccounts/{name}/token`,
// answered from the service account as Kubernetes' TokenREST does
// (pkg/registry/core/serviceaccount/storage/token.go). Nothing is stored.
import { type NamingProfile, type ObjectHeader, type ServiceAccount, TokenRequest, defaultTokenRequest } from "@orch/api";
import { errors, fieldError, rfc3339 } from "@orch/machinery";
import type { ActionSubresource, ClusterReader } from "../../generic/kind.js";
import type { TokenService } from "../../generic/services.js";

/** ValidateTokenRequest's bounds. */
const MIN_EXPIRATION_SECONDS = 600;
const MAX_EXPIRATION_SECONDS = 2 ** 32;

type BoundObjectReference = NonNullable<TokenRequest["spec"]["boundObjectRef"]>;

/** schema.FromAPIVersionAndKind: `v1` and `` are the core group, `g/v` names a group. */
function groupVersionKind(ref: BoundObjectReference) {
  const apiVersion = ref.apiVersion ?? "";
  const parts = apiVersion.split("/");
  const [group, version] = parts.length === 2 ? [parts[0]!, parts[1]!] : parts.length === 1 ? ["", parts[0]!] : ["", ""];
  return { group, version, kind: ref.kind ?? "", text: `${group}/${version}, Kind=${ref.kind ?? ""}` };
}

interface Bound {
  pod?: ObjectHeader;
  secret?: ObjectHeader;
}

/** The bound object must exist, be a Pod or Secret of the namespace, and have the uid given (if any). */
async function boundObject(ref: BoundObjectReference, account: string, namespace: string, cluster: ClusterReader): Promise<Bound> {
  const gvk = groupVersionKind(ref);
  const name = ref.name ?? "";
  const plural = gvk.group === "" ? ({ Pod: "pods", Secret: "secrets" } as Record<string, string>)[gvk.kind] : undefined;
  if (!plural) throw errors.badRequest(`cannot bind token to object of type ${gvk.text}`);
  const obj = await cluster.get("", plural, namespace, name);
  if (!obj) throw errors.notFound({ group: "", resource: plural }, name);
  if (gvk.kind === "Pod") {
    // The ServiceAccount admission plugin fills "default" into pods that name none; orch has no such
    // plugin, so an empty name means "default" here.
    const podAccount = (obj.spec as { serviceAccountName?: string } | undefined)?.serviceAccountName || "default";
    if (podAccount !== account) {
      throw errors.badRequest(`cannot bind token for serviceaccount "${account}" to pod running with different serviceaccount name.`);
    }
  }
  if (ref.uid && ref.uid !== obj.metadata.uid) {
    throw errors.conflict(
      { group: gvk.group, resource: gvk.kind },
      name,
      `the UID in the bound object reference (${ref.uid}) does not match the UID in record. The object might have been deleted and then recreated`,
    );
  }
  return gvk.kind === "Pod" ? { pod: obj } : { secret: obj };
}

export const tokenRequestAction = (p: NamingProfile, tokens: TokenService): ActionSubresource<ServiceAccount, TokenRequest> => {
  const gk = { group: p.group("authentication"), kind: "TokenRequest" };
  return {
    group: gk.group,
    version: "v1",
    kind: "TokenRequest",
    schema: TokenRequest,
    defaults: defaultTokenRequest,
    async answer(account, req, ctx, cluster) {
      const name = account.metadata.name ?? "";
      const namespace = account.metadata.namespace ?? "";
      if (req.metadata.name && req.metadata.name !== name) {
        throw errors.invalid(gk, name, [
          fieldError.invalid("metadata.name", req.metadata.name, "must match the service account name if specified"),
        ]);
      }
      if (req.metadata.namespace && req.metadata.namespace !== namespace) {
        throw errors.invalid(gk, name, [
          fieldError.invalid("metadata.namespace", req.metadata.namespace, "must match the service account namespace if specified"),
        ]);
      }
      const spec = req.spec;
      if (!spec.audiences?.length) spec.audiences = [...tokens.audiences];
      req.metadata.name ||= name;
      req.metadata.namespace ||= namespace;
      // Taken before the token is made, so the reported expiry is never later than the token's `exp`.
      const now = new Date();
      req.metadata.creationTimestamp = rfc3339(now);

      const seconds = spec.expirationSeconds ?? 3600;
      const invalid = [
        ...(seconds < MIN_EXPIRATION_SECONDS
          ? [fieldError.invalid("spec.expirationSeconds", seconds, "may not specify a duration less than 10 minutes")]
          : []),
        ...(seconds > MAX_EXPIRATION_SECONDS
          ? [fieldError.invalid("spec.expirationSeconds", seconds, "may not specify a duration larger than 2^32 seconds")]
          : []),
      ];
      // Kubernetes names no object in this message: the request has been defaulted but not yet bound.
      if (invalid.length > 0) throw errors.invalid(gk, "", invalid);

      const bound = spec.boundObjectRef ? await boundObject(spec.boundObjectRef, name, namespace, cluster) : {};
      if (tokens.maxExpirationSeconds > 0 && seconds > tokens.maxExpirationSeconds) {
        ctx.warnings.push(`requested expiration of ${seconds} seconds shortened to ${tokens.maxExpirationSeconds} seconds`);
        spec.expirationSeconds = tokens.maxExpirationSeconds;
      } else {
        spec.expirationSeconds = seconds;
      }
      const { token, expiresAt } = await tokens.issue({
        serviceAccount: account,
        ...bound,
        audiences: spec.audiences,
        expirationSeconds: spec.expirationSeconds,
        issuedAt: now,
      });
      // Go writes `boundObjectRef` (no omitempty) as null when there is none.
      const echoed = { ...spec, boundObjectRef: spec.boundObjectRef ?? null };
      return { ...req, spec: echoed, status: { token, expirationTimestamp: rfc3339(expiresAt) } };
    },
  };
};
