// How a process connects to the event bus: where (ORCH_NATS_URL) and as whom. The launcher's NATS
// requires a TLS client certificate from the cluster CA; an external NATS may take a TLS certificate
// or a NATS credentials file (nkey + JWT). Every setting is a file, so that a secret never travels
// through the environment.
import { encodeToken } from "@orch/events";
import { readFileSync } from "node:fs";
import { X509Certificate } from "node:crypto";
import { type ConnectionOptions, credsAuthenticator } from "nats";

export interface BusConnection {
  /** `ORCH_NATS_URL`: `nats://` or `tls://` host:port, comma-separated for a cluster. */
  servers: string;
  /** `ORCH_NATS_CA_FILE`: the CA that signed the NATS server's certificate (PEM). */
  caFile?: string;
  /** `ORCH_NATS_CERT_FILE` and `ORCH_NATS_KEY_FILE`: this process's client certificate and key (PEM). */
  certFile?: string;
  keyFile?: string;
  /** `ORCH_NATS_CREDS_FILE`: a NATS credentials file (JWT and nkey seed), for a NATS in operator mode. */
  credsFile?: string;
  /**
   * `ORCH_NATS_INBOX_PREFIX`: where replies to this process go. Each identity may subscribe to its own
   * inbox only (`_INBOX.<username>`), so that nobody reads another's deliveries; derived from the
   * certificate's common name when unset.
   */
  inboxPrefix?: string;
}

/** The bus settings of the environment, or undefined when ORCH_NATS_URL is unset (no bus). */
export function busConnectionFromEnv(env: NodeJS.ProcessEnv = process.env): BusConnection | undefined {
  if (!env.ORCH_NATS_URL) return undefined;
  const bus: BusConnection = { servers: env.ORCH_NATS_URL };
  if (env.ORCH_NATS_CA_FILE) bus.caFile = env.ORCH_NATS_CA_FILE;
  if (env.ORCH_NATS_CERT_FILE) bus.certFile = env.ORCH_NATS_CERT_FILE;
  if (env.ORCH_NATS_KEY_FILE) bus.keyFile = env.ORCH_NATS_KEY_FILE;
  if (env.ORCH_NATS_CREDS_FILE) bus.credsFile = env.ORCH_NATS_CREDS_FILE;
  if (env.ORCH_NATS_INBOX_PREFIX) bus.inboxPrefix = env.ORCH_NATS_INBOX_PREFIX;
  if (Boolean(bus.certFile) !== Boolean(bus.keyFile)) {
    throw new Error("ORCH_NATS_CERT_FILE and ORCH_NATS_KEY_FILE go together: set both or neither");
  }
  return bus;
}

/** The inbox an identity may subscribe to (see `consumerPermissions`). */
export const inboxPrefixFor = (username: string): string => `_INBOX.${encodeToken(username)}`;

/** The common name of a PEM certificate's subject: the username it authenticates as. */
export function commonName(certPem: string): string {
  const line = new X509Certificate(certPem).subject.split("\n").find((l) => l.startsWith("CN="));
  if (!line) throw new Error("the bus client certificate has no common name");
  return line.slice(3);
}

/** nats.js connection options for `bus` (servers, TLS, credentials, inbox); `name` names the client to the server. */
export function natsConnectOptions(bus: BusConnection, name: string): ConnectionOptions {
  const options: ConnectionOptions = { servers: bus.servers.split(",").map((s) => s.trim()), name };
  if (bus.caFile || bus.certFile || bus.servers.startsWith("tls://")) {
    options.tls = {
      ...(bus.caFile ? { caFile: bus.caFile } : {}),
      ...(bus.certFile && bus.keyFile ? { certFile: bus.certFile, keyFile: bus.keyFile } : {}),
    };
  }
  if (bus.credsFile) {
    const file = bus.credsFile;
    // Read at each (re)connect: a rotated credentials file is picked up without a restart.
    options.authenticator = credsAuthenticator(() => readFileSync(file));
  }
  const inboxPrefix = bus.inboxPrefix ?? (bus.certFile ? inboxPrefixFor(commonName(readFileSync(bus.certFile, "utf8"))) : undefined);
  if (inboxPrefix) options.inboxPrefix = inboxPrefix;
  return options;
}
