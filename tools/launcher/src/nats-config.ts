// The launcher's nats-server configuration: one server, or a cluster of three or five on loopback.
// Every server takes only TLS clients with a certificate from the cluster CA, mapped to users by the
// authorization file the apiserver derives from RBAC (docs/security.md). A cluster's routes are TLS
// too, and a route must know a password generated for this run, so no client can join as a server.
import { randomBytes } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { basename, join } from "node:path";

/** ORCH_NATS_CLUSTER: how many servers the launcher runs; 1 unless set (3 or 5: JetStream needs a majority). */
export function natsClusterSize(setting: string | undefined): number {
  if (setting === undefined || setting.trim() === "" || setting === "1") return 1;
  if (setting === "3" || setting === "5") return Number(setting);
  throw new Error(`ORCH_NATS_CLUSTER must be 1, 3 or 5, not ${JSON.stringify(setting)}`);
}

export interface NatsConfigOptions {
  dataDir: string;
  pki: string;
  /** One client port per server. */
  clientPorts: number[];
  /** Route ports for a cluster (one per server); chosen by the caller so that they are free. */
  routePorts?: number[];
  authorizationFile: string;
}

export interface NatsConfig {
  /** The process name in the launcher's output: `nats`, or `nats-1` … in a cluster. */
  name: string;
  file: string;
}

/**
 * Writes one configuration file per server and returns where. Everything is in the file, nothing by
 * flag: a reload resets what the file does not say, and nats-server 2.9 then turns JetStream off.
 */
export async function natsConfigs(o: NatsConfigOptions): Promise<NatsConfig[]> {
  const quoted = (path: string) => JSON.stringify(path);
  const pki = (name: string) => quoted(join(o.pki, name));
  const tls = `cert_file: ${pki("nats-server.crt")}, key_file: ${pki("nats-server.key")}, ca_file: ${pki("ca.crt")}`;
  const common = [
    // Room for the largest object the apiserver accepts (3 MiB) in one event; larger ones are sent as
    // their identity only (see libs/event-relay busEnvelope).
    "max_payload: 4MB",
    `tls { ${tls}, verify_and_map: true, timeout: 2 }`,
    `include ${quoted(basename(o.authorizationFile))}`,
  ];
  if (o.clientPorts.length === 1) {
    const file = join(o.dataDir, "nats.conf");
    await writeFile(
      file,
      [
        `host: "127.0.0.1", port: ${o.clientPorts[0]}, pid_file: ${quoted(join(o.dataDir, "nats.pid"))}`,
        `jetstream { store_dir: ${quoted(join(o.dataDir, "nats"))} }`,
        ...common,
        "",
      ].join("\n"),
    );
    return [{ name: "nats", file }];
  }

  const routePorts = o.routePorts ?? [];
  if (routePorts.length !== o.clientPorts.length) throw new Error("a NATS cluster needs one route port per server");
  // Only this run's servers know it; the files are the owner's alone (the launcher's umask is 077).
  const password = randomBytes(24).toString("hex");
  const configs: NatsConfig[] = [];
  for (const [i, port] of o.clientPorts.entries()) {
    const n = i + 1;
    const routes = routePorts.filter((_, j) => j !== i).map((p) => quoted(`nats-route://route:${password}@127.0.0.1:${p}`));
    const file = join(o.dataDir, `nats-${n}.conf`);
    await writeFile(
      file,
      [
        `server_name: "orch-nats-${n}"`,
        `host: "127.0.0.1", port: ${port}, pid_file: ${quoted(join(o.dataDir, `nats-${n}.pid`))}`,
        // Its own store, apart from a single server's (nats/), so switching between the two mixes nothing.
        `jetstream { store_dir: ${quoted(join(o.dataDir, "nats-cluster", String(n)))} }`,
        "cluster {",
        '  name: "orch"',
        `  host: "127.0.0.1", port: ${routePorts[i]}`,
        `  authorization { user: "route", password: "${password}", timeout: 2 }`,
        `  tls { cert_file: ${pki("nats-route.crt")}, key_file: ${pki("nats-route.key")}, ca_file: ${pki("ca.crt")}, timeout: 2 }`,
        `  routes: [${routes.join(", ")}]`,
        "}",
        ...common,
        "",
      ].join("\n"),
    );
    configs.push({ name: `nats-${n}`, file });
  }
  return configs;
}
