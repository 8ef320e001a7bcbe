// Signer permissions, as Kubernetes' certificate admission plugins check them
// (plugin/pkg/admission/certificates/{approval,signing,ctbattest}, certificates.IsAuthorizedForSignerName):
// verb `attest`, `approve` or `sign` on resource `signers` of the certificates group, named by the signer
// or by its domain with `/*` (`example.com/*`).
import type { ObjectHeader } from "@orch/api";
import { errors } from "@orch/machinery";
import { resourceAttributes } from "../../generic/authorizer.js";
import type { RequestContext, Strategy } from "../../generic/kind.js";

async function authorizedForSigner(ctx: RequestContext, verb: string, signerName: string): Promise<boolean> {
  if (!ctx.authorizer) return true;
  const apiGroup = ctx.profile.group("certificates");
  const ask = (name: string) => ctx.authorizer!.authorize(resourceAttributes(ctx.user, verb, { apiGroup, resource: "signers", name }));
  if ((await ask(signerName)).allowed) return true;
  return (await ask(`${signerName.split("/")[0]}/*`)).allowed;
}

/**
 * An `admit` hook that refuses the write (admission.NewForbidden on the kind's resource) unless the
 * caller holds `verb` on the signer `signerOf` names; `applies` says whether the write needs it.
 */
export function requireSignerPermission<T extends ObjectHeader>(
  resource: string,
  verb: "attest" | "approve" | "sign",
  signerOf: (obj: T, old: T | undefined) => string,
  message: (signerName: string) => string,
  applies: (obj: T, old: T | undefined) => boolean = () => true,
): NonNullable<Strategy<T>["admit"]> {
  return async (obj, old, ctx) => {
    if (!applies(obj, old)) return [];
    const signerName = signerOf(obj, old);
    if (await authorizedForSigner(ctx, verb, signerName)) return [];
    throw errors.forbidden({ group: ctx.profile.group("certificates"), resource }, obj.metadata.name ?? "", message(signerName));
  };
}
