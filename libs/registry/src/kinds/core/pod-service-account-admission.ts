// Kubernetes' ServiceAccount admission plugin (plugin/pkg/admission/serviceaccount), on pod create:
// the pod runs as `default` unless it names an account, the account must exist, an account annotated
// `<domain>/enforce-mountable-secrets: "true"` limits the secrets the pod may use, the pod mounts a
// projected API token (token, cluster CA, namespace) unless automounting is off, and it inherits the
// account's image pull secrets. Mirror pods (made by a node agent from a file) may use none of this.
import type { NamingProfile, Pod, ServiceAccount } from "@orch/api";
import { randomNameSuffix } from "@orch/machinery";
import type { ClusterReader, RequestContext } from "../../generic/kind.js";
import { forbiddenByAdmission } from "../../generic/admission.js";

const DEFAULT_SERVICE_ACCOUNT = "default";
/** Kubernetes' WarnOnlyBoundTokenExpirationSeconds: an hour and seven seconds, so the node refreshes it. */
const TOKEN_EXPIRATION_SECONDS = 3607;
/** The default service account is made by a controller just after its namespace: wait for it a little. */
const DEFAULT_ACCOUNT_ATTEMPTS = 10;

type PodSpec = NonNullable<Pod["spec"]>;
type Container = PodSpec["containers"][number];

const GR = { group: "", resource: "pods" };

export const podServiceAccountAdmission =
  (profile: NamingProfile) =>
  async (pod: Pod, _ctx: RequestContext, cluster: ClusterReader): Promise<void> => {
    const spec = pod.spec;
    if (!spec) return;
    const namespace = pod.metadata.namespace ?? "";
    const refuse = (why: string) => forbiddenByAdmission(GR, pod, why);

    if (pod.metadata.annotations?.[`${profile.wellKnownDomain}/config.mirror`] !== undefined) {
      if (spec.serviceAccountName) throw refuse("a mirror pod may not reference service accounts");
      if (secretNames(spec).length > 0) throw refuse("a mirror pod may not reference secrets");
      if ((spec.volumes ?? []).some((v) => v.projected?.sources?.some((s) => s.serviceAccountToken)))
        throw refuse("a mirror pod may not use ServiceAccountToken volume projections");
      return;
    }

    spec.serviceAccountName ||= DEFAULT_SERVICE_ACCOUNT;
    const account = await findServiceAccount(cluster, namespace, spec.serviceAccountName);
    if (!account) {
      throw refuse(
        `error looking up service account ${namespace}/${spec.serviceAccountName}: serviceaccount "${spec.serviceAccountName}" not found`,
      );
    }
    if ((spec.automountServiceAccountToken ?? account.automountServiceAccountToken ?? true) === true) {
      mountToken(spec, profile);
    }
    if ((spec.imagePullSecrets ?? []).length === 0 && account.imagePullSecrets?.length) {
      spec.imagePullSecrets = account.imagePullSecrets.map((ref) => ({ ...ref }));
    }
    if (account.metadata.annotations?.[profile.annotations.enforceMountableSecrets] === "true") {
      const why = unreferencedSecret(spec, account);
      if (why) throw refuse(why);
    }
  };

async function findServiceAccount(cluster: ClusterReader, namespace: string, name: string): Promise<ServiceAccount | undefined> {
  const attempts = name === DEFAULT_SERVICE_ACCOUNT ? DEFAULT_ACCOUNT_ATTEMPTS : 1;
  for (let i = 0; i < attempts; i++) {
    if (i > 0) await new Promise((r) => setTimeout(r, 100 + Math.floor(Math.random() * 100)));
    const found = await cluster.get("", "serviceaccounts", namespace, name);
    if (found) return found as ServiceAccount;
  }
  return undefined;
}

/** The projected volume Kubernetes names `kube-api-access-<random>`, mounted read-only in every container. */
function mountToken(spec: PodSpec, profile: NamingProfile): void {
  const volumeBase = `${profile.systemPrefix}-api-access-`;
  const mountPath = `/var/run/secrets/${profile.wellKnownDomain}/serviceaccount`;
  const existing = (spec.volumes ?? []).find((v) => v.name.startsWith(volumeBase));
  const volumeName = existing?.name ?? volumeBase + randomNameSuffix();
  let needed = false;
  const mount = (containers: Container[] | undefined) => {
    for (const c of containers ?? []) {
      // A mount of its own at the token's path keeps the container's choice.
      if ((c.volumeMounts ?? []).some((m) => m.mountPath === mountPath)) continue;
      c.volumeMounts = [...(c.volumeMounts ?? []), { name: volumeName, readOnly: true, mountPath }];
      needed = true;
    }
  };
  mount(spec.initContainers as Container[] | undefined);
  mount(spec.containers);
  if (existing || !needed) return;
  spec.volumes = [
    ...(spec.volumes ?? []),
    {
      name: volumeName,
      projected: {
        defaultMode: 0o644,
        sources: [
          { serviceAccountToken: { path: "token", expirationSeconds: TOKEN_EXPIRATION_SECONDS } },
          { configMap: { name: `${profile.systemPrefix}-root-ca.crt`, items: [{ key: "ca.crt", path: "ca.crt" }] } },
          { downwardAPI: { items: [{ path: "namespace", fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } }] } },
        ],
      },
    } as NonNullable<PodSpec["volumes"]>[number],
  ];
}

/** Every secret a pod names: secret volumes, env, envFrom and image pull secrets (podutil.VisitPodSecretNames, in brief). */
function secretNames(spec: PodSpec): string[] {
  const names: string[] = [];
  for (const v of spec.volumes ?? []) {
    if (v.secret?.secretName) names.push(v.secret.secretName);
    for (const s of v.projected?.sources ?? []) if (s.secret?.name) names.push(s.secret.name);
  }
  for (const c of [...(spec.initContainers ?? []), ...spec.containers] as Container[]) {
    for (const e of c.env ?? []) if (e.valueFrom?.secretKeyRef?.name) names.push(e.valueFrom.secretKeyRef.name);
    for (const e of c.envFrom ?? []) if (e.secretRef?.name) names.push(e.secretRef.name);
  }
  for (const p of spec.imagePullSecrets ?? []) if (p.name) names.push(p.name);
  return names;
}

/** limitSecretReferences: the first secret the pod uses that its account does not list, as Kubernetes words it. */
function unreferencedSecret(spec: PodSpec, account: ServiceAccount): string | undefined {
  const mountable = new Set((account.secrets ?? []).map((s) => s.name));
  const sa = account.metadata.name ?? "";
  for (const v of spec.volumes ?? []) {
    const name = v.secret?.secretName;
    if (name !== undefined && !mountable.has(name))
      return `volume with secret.secretName="${name}" is not allowed because service account ${sa} does not reference that secret`;
  }
  const containers: [string, Container[] | undefined][] = [
    ["init container", spec.initContainers as Container[] | undefined],
    ["container", spec.containers],
  ];
  for (const [what, list] of containers) {
    for (const c of list ?? []) {
      for (const e of c.env ?? []) {
        const name = e.valueFrom?.secretKeyRef?.name;
        if (name !== undefined && !mountable.has(name))
          return `${what} ${c.name} with envVar ${e.name} referencing secret.secretName="${name}" is not allowed because service account ${sa} does not reference that secret`;
      }
      for (const e of c.envFrom ?? []) {
        const name = e.secretRef?.name;
        if (name !== undefined && !mountable.has(name))
          return `${what} ${c.name} with envFrom referencing secret.secretName="${name}" is not allowed because service account ${sa} does not reference that secret`;
      }
    }
  }
  const pullable = new Set((account.imagePullSecrets ?? []).map((s) => s.name));
  for (const [i, ref] of (spec.imagePullSecrets ?? []).entries()) {
    if (!pullable.has(ref.name))
      return `imagePullSecrets[${i}].name="${ref.name}" is not allowed because service account ${sa} does not reference that imagePullSecret`;
  }
  return undefined;
}
