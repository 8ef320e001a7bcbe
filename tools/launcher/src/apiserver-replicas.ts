// Several apiservers behind one address (docs/high-availability.md): ORCH_APISERVERS=N with a shared
// PostgreSQL database (ORCH_STORAGE) runs N apiserver processes on ports of their own, sharing the data
// directory's CA and keys, and HAProxy in TCP mode on ORCH_PORT in front of them. TLS passes through
// HAProxy untouched, so client certificates reach the apiservers as before.
import { readFileSync } from "node:fs";

export interface ApiserverReplicas {
  count: number;
  /** Where clients connect: HAProxy's address, written into every kubeconfig (ORCH_EXTERNAL_URL). */
  externalUrl: string;
  bind: string;
  port: number;
  /** Where the launcher itself reaches HAProxy. */
  localHost: string;
}

/** ORCH_APISERVERS (default 1); more than one needs a shared database. Undefined for the one-apiserver default. */
export function apiserverReplicasFromEnv(env: NodeJS.ProcessEnv): ApiserverReplicas | undefined {
  const value = (env.ORCH_APISERVERS ?? "").trim() || "1";
  const count = Number(value);
  if (!Number.isInteger(count) || count < 1 || count > 16)
    throw new Error(`ORCH_APISERVERS must be a number from 1 to 16, not ${JSON.stringify(value)}`);
  if (count === 1) return undefined;
  if (!/^postgres(ql)?:\/\//.test(env.ORCH_STORAGE?.trim() ?? "")) {
    throw new Error(
      "ORCH_APISERVERS above 1 needs ORCH_STORAGE=postgres://…: the replicas share one database (SQLite is one process's file)",
    );
  }
  const bind = env.ORCH_BIND || "127.0.0.1";
  const port = Number(env.ORCH_PORT || 6443);
  const host = bind === "0.0.0.0" || bind === "::" ? "127.0.0.1" : bind;
  const externalUrl = env.ORCH_EXTERNAL_URL?.trim() || `https://${host.includes(":") ? `[${host}]` : host}:${port}`;
  return { count, externalUrl, bind, port, localHost: host };
}

/**
 * HAProxy's configuration: one TCP frontend, the replicas as its backend. A replica that stops accepting
 * connections is taken out after two failed checks (1 s apart) and a connection that cannot reach the
 * one chosen is redispatched to another; watches are long-lived, so the idle timeouts are long and new
 * connections go to the replica with the fewest.
 */
export function haproxyConfig(replicas: ApiserverReplicas, backends: { name: string; port: number }[]): string {
  const bind = replicas.bind.includes(":") ? `[${replicas.bind}]` : replicas.bind;
  return [
    "defaults",
    "  mode tcp",
    "  timeout connect 2s",
    "  timeout client 1h",
    "  timeout server 1h",
    "  timeout client-fin 5s",
    "  retries 3",
    "  option redispatch",
    "frontend apiserver",
    `  bind ${bind}:${replicas.port}`,
    "  default_backend apiservers",
    "backend apiservers",
    "  balance leastconn",
    "  default-server check inter 1s fall 2 rise 1",
    ...backends.map((b) => `  server ${b.name} 127.0.0.1:${b.port}`),
    "",
  ].join("\n");
}

/** Whether the apiserver at `host:port` answers `/readyz` with 200 (its certificate checked against `caFile`). */
export async function answersReady(host: string, port: number, caFile: string): Promise<boolean> {
  // Loaded here: a launcher without replicas need not load HTTPS before it starts the apiserver.
  const { get: httpsGet } = await import("node:https");
  return new Promise((resolve) => {
    const request = httpsGet({ host, port, path: "/readyz", ca: readFileSync(caFile), timeout: 1000 }, (response) => {
      response.resume();
      resolve(response.statusCode === 200);
    });
    request.on("error", () => resolve(false));
    request.on("timeout", () => request.destroy());
  });
}
