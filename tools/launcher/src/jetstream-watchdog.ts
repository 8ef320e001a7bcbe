// Watches the launcher's own nats-server: JetStream can stop answering while the server itself is up
// (nats-server 2.9 after its disk filled: the JetStream API never answers again, even once space is
// back, and the server ignores SIGTERM). The relay and the informers cannot repair that from outside,
// so when JetStream stays silent the launcher restarts the server; its store is kept, and the relay
// and the informers carry on from where they were.
import { type ConnectionOptions, Events, connect } from "nats";

export interface WatchdogOptions {
  /** How often JetStream is asked (default 5 s). */
  checkEveryMs?: number;
  /** How long an answer may take (default 2 s). */
  answerWithinMs?: number;
  /** How many unanswered checks in a row mean it is stuck (default 3). */
  silences?: number;
}

export interface JetStreamWatchdog {
  stop(): Promise<void>;
}

/**
 * How the launcher connects to its own nats-server: a first attempt that fails (a TLS handshake past
 * the server's 2 s on a machine busy starting control planes) is retried like a dropped connection,
 * rather than ending the launcher's start.
 */
export const KEEP_TRYING = { maxReconnectAttempts: -1, reconnectTimeWait: 250, waitOnFirstConnect: true } as const;

/** Calls `stuck` each time JetStream has not answered `silences` checks in a row while the server was reachable. */
export async function watchJetStream(
  nats: string | ConnectionOptions,
  stuck: () => void,
  options: WatchdogOptions = {},
): Promise<JetStreamWatchdog> {
  const { checkEveryMs = 5_000, answerWithinMs = 2_000, silences: limit = 3 } = options;
  const server = typeof nats === "string" ? { servers: nats } : nats;
  const nc = await connect({ name: "orch-launcher-watchdog", ...server, ...KEEP_TRYING });
  let connected = true;
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === Events.Disconnect) connected = false;
      else if (status.type === Events.Reconnect) connected = true;
    }
  })();
  let silences = 0;
  const timer = setInterval(() => {
    if (!connected) return;
    nc.request("$JS.API.INFO", "", { timeout: answerWithinMs }).then(
      () => (silences = 0),
      () => {
        // A server going away mid-request is a restart, not a silence.
        if (!connected) return;
        if (++silences < limit) return;
        silences = 0;
        stuck();
      },
    );
  }, checkEveryMs);
  return {
    async stop() {
      clearInterval(timer);
      await nc.close().catch(() => undefined);
    },
  };
}
