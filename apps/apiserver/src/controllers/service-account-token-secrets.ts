// Kubernetes' token controller (kube-controller-manager, tokens_controller.go): a Secret of type
// `kubernetes.io/service-account-token` that names a service account gets a long-lived token for it,
// with the cluster CA and the namespace beside it; the Secret is deleted when its account is gone or
// was replaced by another of the same name (the uid annotation no longer matches).
import type { NamingProfile, ObjectHeader } from "@orch/api";
import { type Controller, runController } from "@orch/controller";
import type { Logger } from "@orch/log";
import type { ClusterReader, RequestContext, ResourceStore } from "@orch/registry";
import { type ObjectKey, type Storage, StorageInformer } from "@orch/storage";
import type { ServiceAccountTokens } from "@orch/tokens";
import { lostRace } from "./write-races.js";

export const SERVICE_ACCOUNT_TOKEN_TYPE = "kubernetes.io/service-account-token";

type Secret = ObjectHeader & { type?: string; data?: Record<string, string> };

const b64 = (s: string) => Buffer.from(s, "utf8").toString("base64");

export class ServiceAccountTokenSecrets {
  private readonly informer: StorageInformer<ObjectHeader>;
  private readonly controller: Controller;
  private readonly nameKey: string;
  private readonly uidKey: string;
  /**
   * Account (`namespace/name`) → the names of the token Secrets naming it: an account no token Secret
   * names has nothing to reconcile, so its events are not even parsed.
   */
  private readonly tokenSecrets = new Map<string, Set<string>>();

  constructor(
    storage: Storage,
    private readonly deps: {
      secrets: ResourceStore;
      cluster: ClusterReader;
      tokens: ServiceAccountTokens;
      profile: NamingProfile;
      caPem: string;
      ctx: () => RequestContext;
    },
    log: Logger,
  ) {
    this.nameKey = deps.profile.annotations.serviceAccountName;
    this.uidKey = `${deps.profile.wellKnownDomain}/service-account.uid`;
    // Secrets are listed first: the index is complete before the first account is looked at.
    this.informer = new StorageInformer(storage, {
      resources: ["core/secrets", "core/serviceaccounts"],
      keep: (key) => key.resource !== "core/serviceaccounts" || this.tokenSecrets.has(`${key.namespace}/${key.name}`),
      log,
    });
    this.informer.addEventHandler({
      onAdd: (obj, key) => this.indexSecret(key, undefined, obj),
      onUpdate: (previous, obj, key) => {
        if (key.resource === "core/secrets") this.indexSecret(key, previous(), obj);
      },
      onDelete: (obj, key) => this.indexSecret(key, obj, undefined),
    });
    this.controller = runController({
      name: "service-account-token-secrets",
      reconciler: (key) => this.reconcile(key),
      // Keyed by account (`namespace/name`): the account itself, or a token Secret naming it.
      sources: [
        {
          informer: this.informer,
          toKeys: (obj) => {
            if (obj.kind === "ServiceAccount") return [`${obj.metadata.namespace ?? ""}/${obj.metadata.name ?? ""}`];
            const account = this.accountNamedBy(obj);
            return account ? [account] : [];
          },
        },
      ],
      log,
    });
  }

  /** Moves a Secret in the index from the account its previous state named to the one it names now. */
  private indexSecret(key: ObjectKey, before: ObjectHeader | undefined, after: ObjectHeader | undefined): void {
    if (key.resource !== "core/secrets") return;
    const was = before && this.accountNamedBy(before);
    const now = after && this.accountNamedBy(after);
    if (was === now) return;
    if (was !== undefined) {
      const names = this.tokenSecrets.get(was);
      names?.delete(key.name);
      if (names?.size === 0) this.tokenSecrets.delete(was);
    }
    if (now !== undefined) this.tokenSecrets.set(now, (this.tokenSecrets.get(now) ?? new Set<string>()).add(key.name));
  }

  /** The account (`namespace/name`) a token Secret is for; undefined for any other Secret. */
  private accountNamedBy(secret: ObjectHeader): string | undefined {
    const account = secret.metadata.annotations?.[this.nameKey];
    return (secret as Secret).type === SERVICE_ACCOUNT_TOKEN_TYPE && account ? `${secret.metadata.namespace ?? ""}/${account}` : undefined;
  }

  private async reconcile(key: string): Promise<void> {
    const [namespace = "", name = ""] = key.split("/");
    const { cluster, secrets } = this.deps;
    const account = await cluster.get("", "serviceaccounts", namespace, name);
    const tokenSecrets = ((await cluster.list("", "secrets", namespace)) as Secret[]).filter(
      (s) => s.type === SERVICE_ACCOUNT_TOKEN_TYPE && s.metadata.annotations?.[this.nameKey] === name && !s.metadata.deletionTimestamp,
    );
    for (const secret of tokenSecrets) {
      const uid = secret.metadata.annotations?.[this.uidKey];
      if (!account || (uid !== undefined && uid !== account.metadata.uid)) {
        await this.ignoreGone(
          secrets.delete(namespace, secret.metadata.name ?? "", this.deps.ctx(), { preconditions: { uid: secret.metadata.uid } }, false),
        );
        continue;
      }
      await this.fill(secret, account);
    }
  }

  /** Token, CA and namespace where missing or stale; the account's name and uid as annotations. */
  private async fill(secret: Secret, account: ObjectHeader): Promise<void> {
    const namespace = secret.metadata.namespace ?? "";
    const data = secret.data ?? {};
    const annotations = secret.metadata.annotations ?? {};
    const caData = b64(this.deps.caPem);
    const complete =
      !!data.token && data["ca.crt"] === caData && data.namespace === b64(namespace) && annotations[this.uidKey] === account.metadata.uid;
    if (complete) return;
    const token = data.token || b64(await this.deps.tokens.issueLegacy(account, secret.metadata.name ?? ""));
    const name = secret.metadata.name ?? "";
    await this.ignoreGone(
      this.deps.secrets.update(namespace, name, undefined, this.deps.ctx(), {}, (current) => {
        // The resourceVersion read here makes a concurrent change a conflict, retried by the queue.
        const live = (current ?? secret) as Secret;
        return {
          ...live,
          metadata: {
            ...live.metadata,
            annotations: {
              ...live.metadata.annotations,
              [this.nameKey]: account.metadata.name ?? "",
              [this.uidKey]: account.metadata.uid ?? "",
            },
          },
          data: { ...live.data, token: live.data?.token || token, "ca.crt": caData, namespace: b64(namespace) },
        } as ObjectHeader;
      }),
    );
  }

  /** A Secret deleted meanwhile needs nothing more. */
  private async ignoreGone(write: Promise<unknown>): Promise<void> {
    try {
      await write;
    } catch (e) {
      if (lostRace(e)) return;
      throw e;
    }
  }

  async stop(): Promise<void> {
    await this.controller.stop();
    this.informer.stop();
  }
}
