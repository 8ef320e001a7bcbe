// The launcher's own event bus: its nats-server (or a cluster of them), the JetStream watchdog and the
// bus authorization it follows, ready once the apiserver's relay has created the event stream.
// main.ts loads this module only once the apiserver is running: the NATS client is most of the
// launcher's code, and loading it first would hold back the apiserver's start by as long.
import { natsConnectOptions } from "@orch/bus-access";
import { EVENTS_STREAM } from "@orch/events";
import { join } from "node:path";
import { type ConnectionOptions, connect as connectNats } from "nats";
import { followBusAuthorization } from "./bus-authorization.js";
import { KEEP_TRYING, watchJetStream } from "./jetstream-watchdog.js";
import { natsConfigs } from "./nats-config.js";
import { Supervised } from "./supervisor.js";
import { waitFor } from "./wait-for.js";

export interface EventBusOptions {
  natsServer: string;
  dataDir: string;
  pki: string;
  /** `tls://…` addresses of the servers, comma-separated, as the processes are told (ORCH_NATS_URL). */
  url: string;
  clientPorts: number[];
  /** One per server in a cluster, none for a single server. */
  routePorts: number[];
  authorizationFile: string;
  env: NodeJS.ProcessEnv;
}

/** What watches the servers; the servers themselves are the launcher's children. */
export interface EventBus {
  stop(): Promise<void>;
}

/**
 * Starts the servers and waits for the event stream. `supervise` gets the servers before they start,
 * so that a launcher stopped meanwhile stops them too; `watching` gets what must stop before them.
 */
export async function startEventBus(
  o: EventBusOptions,
  supervise: (servers: Supervised[]) => void,
  watching: (bus: EventBus) => void,
  log: (line: string) => void,
): Promise<void> {
  const configs = await natsConfigs({
    dataDir: o.dataDir,
    pki: o.pki,
    clientPorts: o.clientPorts,
    routePorts: o.routePorts,
    authorizationFile: o.authorizationFile,
  });
  const servers = configs.map(
    ({ name, file }) =>
      new Supervised(
        {
          name,
          command: o.natsServer,
          args: ["-c", file],
          env: o.env,
          // nats-server's banner is noise here; its warnings and errors are not, but for one: nats-server
          // 2.9 warns of each certificate-mapped client at a reload, and drops it (it reconnects at once).
          show: (line) => !line.includes("[INF]") && !line.includes("but user required from cert"),
        },
        log,
      ),
  );
  supervise(servers);
  await Promise.all(
    servers.map((nats) => {
      const ready = nats.waitForLine((line) => line.includes("Server is ready"), 30_000);
      nats.start();
      return ready;
    }),
  );
  log(`[launcher] nats-server listening on ${o.url}${servers.length > 1 ? ` (a cluster of ${servers.length})` : ""}`);
  // The launcher acts on the bus as the apiserver's relay does: it owns that identity's files anyway.
  const relay = join(o.pki, "event-relay");
  const launcherBus = natsConnectOptions(
    { servers: o.url, caFile: join(o.pki, "ca.crt"), certFile: `${relay}.crt`, keyFile: `${relay}.key` },
    "orch-launcher",
  );
  // A single server whose JetStream wedges is restarted; a cluster carries on without the stuck node.
  const watchdog =
    servers.length === 1 ? await watchJetStream(launcherBus, () => servers[0]!.restart("JetStream stopped answering")) : undefined;
  const follower = followBusAuthorization(o.authorizationFile, servers, launcherBus, log);
  watching({
    async stop() {
      await watchdog?.stop();
      follower.stop();
    },
  });
  // Informers need the event stream, which the relay creates once it is connected.
  await waitForEventStream(launcherBus);
}

async function waitForEventStream(bus: ConnectionOptions): Promise<void> {
  const nc = await connectNats({ ...bus, name: "orch-launcher", ...KEEP_TRYING });
  try {
    const jsm = await nc.jetstreamManager({ checkAPI: false, timeout: 2_000 });
    await waitFor(
      () =>
        jsm.streams.info(EVENTS_STREAM).then(
          () => true,
          () => false,
        ),
      "the event stream",
    );
  } finally {
    await nc.close();
  }
}
