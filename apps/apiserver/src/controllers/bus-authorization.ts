// Keeps the NATS server's authorization file in step with RBAC (the rules are in @orch/bus-access):
// on any change of a role or binding it computes, for every user some binding names, the event
// subjects that user may watch, and rewrites the file when the result differs. Whoever runs the NATS
// server reloads it on change (the launcher does; see docs/security.md for an external NATS).
import {
  ALL_EVENTS,
  type BusUser,
  PUBLISHER_PERMISSIONS,
  authorizationConfig,
  certificateSubject,
  consumerPermissions,
  watchableSubjects,
} from "@orch/bus-access";
import type { ObjectHeader } from "@orch/api";
import { type Controller, runController } from "@orch/controller";
import type { Logger } from "@orch/log";
import { type Storage, StorageInformer } from "@orch/storage";
import { randomUUID } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { rename, writeFile } from "node:fs/promises";
import type { RbacAuthorizer } from "../authz/rbac-authorizer.js";

/** Identities with fixed rights: the apiserver's relay publishes, the admin (system:masters) reads all. */
export interface FixedBusIdentities {
  publisher: { commonName: string; organizations?: string[] };
  admin: { commonName: string; organizations: string[] };
}

/** What a user authenticated by a client certificate of that name alone is: its name and system:authenticated. */
const certificateUser = (username: string) => ({ username, groups: ["system:authenticated"] });

export async function busUsers(rbac: RbacAuthorizer, fixed: FixedBusIdentities): Promise<BusUser[]> {
  const users: BusUser[] = [
    { subject: certificateSubject(fixed.publisher.commonName, fixed.publisher.organizations), permissions: PUBLISHER_PERMISSIONS },
    {
      subject: certificateSubject(fixed.admin.commonName, fixed.admin.organizations),
      permissions: consumerPermissions(fixed.admin.commonName, [ALL_EVENTS]),
    },
  ];
  const namespaces = rbac.bindingNamespaces();
  for (const username of [...rbac.boundUsers()].sort()) {
    if (username === fixed.publisher.commonName || username === fixed.admin.commonName) continue;
    const user = certificateUser(username);
    const clusterRules = (await rbac.rulesFor(user, "")).rules;
    const subjects = new Set(watchableSubjects(clusterRules));
    for (const namespace of namespaces) {
      const cluster = new Set(clusterRules);
      const local = (await rbac.rulesFor(user, namespace)).rules.filter((r) => !cluster.has(r));
      for (const s of watchableSubjects(local, namespace)) subjects.add(s);
    }
    if (subjects.size > 0) users.push({ subject: certificateSubject(username), permissions: consumerPermissions(username, [...subjects]) });
  }
  return users;
}

export class BusAuthorizationWriter {
  private readonly informer: StorageInformer<ObjectHeader>;
  private readonly controller: Controller;
  /** Writes one after the other: a slower earlier one must not replace a later result. */
  private writing: Promise<void> = Promise.resolve();

  constructor(
    storage: Storage,
    rbacResources: string[],
    private readonly rbac: RbacAuthorizer,
    private readonly file: string,
    private readonly fixed: FixedBusIdentities,
    log: Logger,
  ) {
    this.informer = new StorageInformer(storage, { resources: rbacResources, log });
    this.controller = runController({
      name: "bus-authorization",
      // One key: the whole file is recomputed from the RBAC index, whatever changed.
      reconciler: () => this.write(),
      sources: [{ informer: this.informer, toKeys: () => ["file"] }],
      log,
    });
  }

  /** Writes the file now (at start, before NATS is told where it is), then on every RBAC change. */
  write(): Promise<void> {
    const next = this.writing.then(() => this.writeNow());
    this.writing = next.catch(() => undefined);
    return next;
  }

  private async writeNow(): Promise<void> {
    const text = authorizationConfig(await busUsers(this.rbac, this.fixed));
    if (existsSync(this.file) && readFileSync(this.file, "utf8") === text) return;
    // Atomically: the NATS server must never reload a half-written file.
    // A temporary file of this process's own: replicas sharing a data directory all write this file.
    const temporary = `${this.file}.${randomUUID()}.tmp`;
    await writeFile(temporary, text, { mode: 0o600 });
    await rename(temporary, this.file);
  }

  async stop(): Promise<void> {
    await this.controller.stop();
    this.informer.stop();
  }
}
