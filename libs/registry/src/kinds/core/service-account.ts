// ServiceAccount (core/v1, spec 2.1), with Kubernetes' strategy (pkg/registry/core/serviceaccount):
// secret references keep only their name, and setting the enforce-mountable-secrets annotation
// answers with a deprecation warning. The list semantics (`secrets` merged by name,
// `imagePullSecrets` atomic) are declared in the schema.
import { type NamingProfile, ServiceAccount } from "@orch/api";
import type { KindDefinition, RequestContext, Strategy } from "../../generic/kind.js";
import type { TokenService } from "../../generic/services.js";
import { AGE, column, defineKind } from "../../generic/define.js";
import { tokenRequestAction } from "./token-request.js";

type SecretReference = NonNullable<ServiceAccount["secrets"]>[number];

/** cleanSecretReferences: a mountable secret is named, nothing more. */
function cleanSecretReferences(obj: ServiceAccount): void {
  const secrets = obj.secrets;
  if (secrets) obj.secrets = secrets.map((s): SecretReference => (s.name === undefined ? {} : { name: s.name }));
}

const hasAnnotation = (obj: ServiceAccount, key: string) =>
  obj.metadata.annotations != null && Object.hasOwn(obj.metadata.annotations, key);

/** warnIfHasEnforceMountableSecretsAnnotation: only a request that newly sets the annotation is warned. */
function enforceMountableSecretsWarning(obj: ServiceAccount, old: ServiceAccount | undefined, ctx: RequestContext): string[] {
  const key = ctx.profile.annotations.enforceMountableSecrets;
  if (old && hasAnnotation(old, key)) return [];
  if (!hasAnnotation(obj, key)) return [];
  return [`metadata.annotations[${key}]: deprecated in v1.32+; prefer separate namespaces to isolate access to mounted secrets`];
}

const serviceAccountStrategy: Strategy<ServiceAccount> = {
  prepareForCreate: cleanSecretReferences,
  prepareForUpdate: cleanSecretReferences,
  warnings: enforceMountableSecretsWarning,
};

/** With a token service, `serviceaccounts/token` issues tokens (TokenRequest). */
export const serviceAccounts = (p: NamingProfile, tokens?: TokenService): KindDefinition =>
  defineKind({
    group: "",
    version: "v1",
    kind: "ServiceAccount",
    plural: "serviceaccounts",
    shortNames: ["sa"],
    namespaced: true,
    schema: ServiceAccount,
    strategy: serviceAccountStrategy,
    deleteReturnsObject: true,
    ...(tokens ? { actions: { token: tokenRequestAction(p, tokens) } } : {}),
    printerColumns: [column("Secrets", "integer", (o) => ((o.secrets as unknown[] | undefined) ?? []).length), AGE],
  });
