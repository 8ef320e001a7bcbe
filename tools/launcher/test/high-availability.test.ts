// The whole highly available topology of docs/high-availability.md under fire: three apiservers on one
// PostgreSQL database behind HAProxy, a NATS cluster of three, two of each controller. While 16 clients
// create, update and delete 5,000 objects, one apiserver, one NATS server and the leading
// deployment-controller are SIGKILLed. Afterwards every acknowledged write is stored, a fresh JetStream
// consumer and an HTTP watch from before the load see every revision once and in order, every
// Deployment converges, and no CertificateSigningRequest got two certificates.
import { ApiClient, type KubeObject, type ResourceRef } from "@orch/client";
import { natsConnectOptions } from "@orch/bus-access";
import { EVENTS_STREAM } from "@orch/events";
import { createCertificateRequest } from "@orch/pki";
import { createPostgresDatabase, postgresAvailable } from "@orch/testing";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { AckPolicy, DeliverPolicy, connect } from "nats";
import { expect, it } from "vitest";
import { kubectlOk, startControlPlane } from "./control-plane.js";

const OBJECTS = 5_000;
const CLIENTS = 16;
const configMaps: ResourceRef = { group: "", version: "v1", plural: "configmaps", namespaced: true };
const csrs: ResourceRef = { group: "certificates.orch.io", version: "v1", plural: "certificatesigningrequests", namespaced: false };
const leases: ResourceRef = { group: "coordination.orch.io", version: "v1", plural: "leases", namespaced: true };

/** Again after a dropped connection or a replica's death: the write may have landed, so each step tolerates that. */
async function persist<T>(step: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await step();
    } catch (e) {
      const code = (e as { code?: unknown }).code;
      if (typeof code === "number" && code < 500 && code !== 429) throw e;
      if (attempt > 50) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
const codeOf = (e: unknown) => (e as { code?: unknown }).code;

it.runIf(await postgresAvailable())(
  "loses nothing when an apiserver, a NATS server and the leading controller die under load",
  async () => {
    const db = await createPostgresDatabase();
    const cp = await startControlPlane(
      {
        ORCH_APISERVERS: "3",
        ORCH_STORAGE: db.url,
        ORCH_NATS_CLUSTER: "3",
        ORCH_CONTROLLER_REPLICAS: "2",
        ORCH_LEADER_ELECT_LEASE_DURATION_SECONDS: "4",
        ORCH_LEADER_ELECT_RENEW_DEADLINE_SECONDS: "3",
        ORCH_LEADER_ELECT_RETRY_PERIOD_SECONDS: "0.5",
        ORCH_POD_READY_DELAY_MS: "100",
      },
      {},
    );
    const client = ApiClient.fromKubeconfig(cp.kubeconfig, { userAgent: "ha-drill" });
    try {
      await kubectlOk(cp, "create", "namespace", "drill");
      for (let i = 0; i < 4; i++) await kubectlOk(cp, "create", "deployment", `web-${i}`, "--image=nginx", "--replicas=2");
      const start = (await client.list(configMaps, { namespace: "drill" })).metadata.resourceVersion!;
      // Watched from before the load, through HAProxy (the watch's replica may be the one that dies: it resumes).
      const watched: { type: string; name: string; rv: number }[] = [];
      const objects = follow(client, configMaps, start, "drill", (type, o) =>
        watched.push({ type, name: o.metadata!.name!, rv: Number(o.metadata!.resourceVersion) }),
      );
      // Every certificate each CSR is seen to carry.
      const certificates = new Map<string, Set<string>>();
      const signed = follow(client, csrs, (await client.list(csrs)).metadata.resourceVersion!, undefined, (_, o) => {
        const cert = (o as { status?: { certificate?: string } }).status?.certificate;
        if (cert) certificates.set(o.metadata!.name!, (certificates.get(o.metadata!.name!) ?? new Set()).add(cert));
      });
      // Three node-client CSRs, auto-approved and signed while the control plane is under fire.
      for (let i = 0; i < 3; i++) {
        const { csrPem } = await createCertificateRequest({ commonName: `system:node:drill-${i}`, organizations: ["system:nodes"] });
        await client.create(csrs, {
          apiVersion: "certificates.orch.io/v1",
          kind: "CertificateSigningRequest",
          metadata: { name: `drill-${i}` },
          spec: {
            request: Buffer.from(csrPem).toString("base64"),
            signerName: "orch.io/orch-apiserver-client-orchlet",
            usages: ["digital signature", "client auth"],
          },
        } as KubeObject);
      }

      // The load: each client creates its objects, updates each, deletes every third.
      const expected = new Map<string, "v2" | "gone">();
      let done = 0;
      const killed = (async () => {
        while (done < OBJECTS / 3) await new Promise((r) => setTimeout(r, 50));
        const line = cp.output.find((l) => l.includes("apiservers behind HAProxy on"))!;
        const apiserverPid = Number([...line.matchAll(/\(pid (\d+)\)/g)][1]![1]);
        const natsPid = Number(readFileSync(join(cp.dataDir, "nats-2.pid"), "utf8"));
        const leader = (
          await persist(() =>
            client.get<KubeObject & { spec: { holderIdentity: string } }>(leases, "deployment-controller", { namespace: "default" }),
          )
        ).spec.holderIdentity;
        const leaderPid = Number(leader.split("_").at(-2));
        for (const pid of [apiserverPid, natsPid, leaderPid]) process.kill(pid, "SIGKILL");
        return { apiserverPid, natsPid, leaderPid };
      })();
      await Promise.all(
        Array.from({ length: CLIENTS }, async (_, c) => {
          for (let i = c; i < OBJECTS; i += CLIENTS) {
            const name = `o-${i}`;
            await persist(() =>
              client
                .create(configMaps, { apiVersion: "v1", kind: "ConfigMap", metadata: { name }, data: { v: "1" } } as KubeObject, {
                  namespace: "drill",
                })
                .catch((e) => (codeOf(e) === 409 ? undefined : Promise.reject(e))),
            );
            await persist(() => client.patch(configMaps, name, { data: { v: "2" } }, { namespace: "drill", type: "merge" }));
            expected.set(name, "v2");
            if (i % 3 === 0) {
              await persist(() =>
                client.delete(configMaps, name, { namespace: "drill" }).catch((e) => (codeOf(e) === 404 ? undefined : Promise.reject(e))),
              );
              expected.set(name, "gone");
            }
            done++;
          }
        }),
      );
      const victims = await killed;
      console.log(
        `killed apiserver ${victims.apiserverPid}, nats-2 ${victims.natsPid}, leading deployment-controller ${victims.leaderPid}`,
      );

      // Every acknowledged write is stored.
      const stored = new Map(
        (await persist(() => client.listAll<KubeObject & { data?: { v?: string } }>(configMaps, { namespace: "drill" }))).items
          // The load's own: every namespace also holds the root CA ConfigMap.
          .filter((o) => o.metadata!.name!.startsWith("o-"))
          .map((o) => [o.metadata!.name!, o.data?.v]),
      );
      const wrong = [...expected].filter(([name, want]) => (want === "gone" ? stored.has(name) : stored.get(name) !== "2"));
      expect(wrong).toEqual([]);
      expect(stored.size).toBe([...expected.values()].filter((v) => v === "v2").length);

      // The HTTP watch from before the load: every revision once, in order, ending at the final state.
      // A last write marks the end: the watch has seen everything once it sees that.
      const marker = await persist(() =>
        client
          .create(configMaps, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "end-of-load" } } as KubeObject, {
            namespace: "drill",
          })
          .catch((e) => (codeOf(e) === 409 ? client.get(configMaps, "end-of-load", { namespace: "drill" }) : Promise.reject(e))),
      );
      const final = marker.metadata!.resourceVersion!;
      await expect
        .poll(() => watched.some((e) => e.name === "end-of-load"), { timeout: 30_000, message: "the watch reaching the end of the load" })
        .toBe(true);
      await objects.stop();
      for (let i = 1; i < watched.length; i++) expect(watched[i]!.rv).toBeGreaterThan(watched[i - 1]!.rv);
      const replayed = new Set<string>();
      for (const e of watched) if (e.name.startsWith("o-")) e.type === "DELETED" ? replayed.delete(e.name) : replayed.add(e.name);
      expect([...replayed].sort()).toEqual([...stored.keys()].sort());

      // A fresh JetStream consumer from the stream's start: revisions contiguous up to the last write.
      const pki = join(cp.dataDir, "pki");
      const nc = await connect({
        ...natsConnectOptions(
          {
            servers: cp.natsUrl!.split(",")[0]!,
            caFile: join(pki, "ca.crt"),
            certFile: join(pki, "event-relay.crt"),
            keyFile: join(pki, "event-relay.key"),
          },
          "ha-drill",
        ),
        ignoreClusterUpdates: true,
      });
      try {
        const jsm = await nc.jetstreamManager();
        /** Every revision in the stream, read by a fresh consumer; undefined until the relay has published `final`. */
        const read = async (): Promise<number[] | undefined> => {
          const info = await jsm.streams.info(EVENTS_STREAM);
          const count = info.state.messages;
          const consumer = await jsm.consumers.add(EVENTS_STREAM, { ack_policy: AckPolicy.None, deliver_policy: DeliverPolicy.All });
          const messages = await (await nc.jetstream().consumers.get(EVENTS_STREAM, consumer.name)).fetch({
            max_messages: count,
            expires: 10_000,
          });
          const revisions: number[] = [];
          for await (const m of messages) {
            // The relay publishes each revision under the id `<epoch>-<revision>`.
            revisions.push(Number(m.headers?.get("Nats-Msg-Id").split("-").at(-1)));
            if (revisions.length === count) break;
          }
          await jsm.consumers.delete(EVENTS_STREAM, consumer.name);
          return (revisions.at(-1) ?? 0) >= Number(final) ? revisions : undefined;
        };
        let revisions: number[] | undefined;
        for (const deadline = Date.now() + 30_000; !revisions && Date.now() < deadline; ) {
          revisions = await read().catch(() => undefined);
          if (!revisions) await new Promise((r) => setTimeout(r, 500));
        }
        expect(revisions, `the stream up to revision ${final}`).toBeDefined();
        for (let i = 1; i < revisions!.length; i++) expect(revisions![i]).toBe(revisions![i - 1]! + 1);
      } finally {
        await nc.close();
      }

      // Every Deployment converges, and no CSR was signed twice.
      for (let i = 0; i < 4; i++) await kubectlOk(cp, "rollout", "status", `deployment/web-${i}`, "--timeout=120s");
      for (let i = 0; i < 3; i++) {
        await expect
          .poll(() => certificates.get(`drill-${i}`)?.size ?? 0, { timeout: 30_000, message: `drill-${i} signed` })
          .toBeGreaterThan(0);
      }
      await signed.stop();
      expect([...certificates].filter(([, certs]) => certs.size > 1).map(([name]) => name)).toEqual([]);
    } finally {
      client.close();
      await cp.stop();
      await db.drop();
    }
  },
  600_000,
);

/** Watches `ref` from `resourceVersion`, resuming where it was whenever the stream ends (a replica died). */
function follow(
  client: ApiClient,
  ref: ResourceRef,
  resourceVersion: string,
  namespace: string | undefined,
  onEvent: (type: string, object: KubeObject) => void,
): { resourceVersion(): number; stop(): Promise<void> } {
  let rv = resourceVersion;
  let running = true;
  let stream: ReturnType<ApiClient["watch"]> | undefined;
  const done = (async () => {
    while (running) {
      try {
        stream = client.watch<KubeObject>(ref, { ...(namespace ? { namespace } : {}), resourceVersion: rv });
        for await (const e of stream) {
          rv = e.object.metadata!.resourceVersion!;
          if (e.type !== "BOOKMARK") onEvent(e.type, e.object);
        }
      } catch {
        if (running) await new Promise((r) => setTimeout(r, 100));
      }
    }
  })();
  return {
    resourceVersion: () => Number(rv),
    async stop() {
      running = false;
      stream?.close();
      await done;
    },
  };
}
