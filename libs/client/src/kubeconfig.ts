// Reads the connection settings of a kubeconfig's current context: server, CA, and the caller's own
// credentials (client certificate and key, or a bearer token). Merging several files, exec and auth
// plugins are out of scope: controllers get a plain kubeconfig with their own identity.
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, dirname, isAbsolute, join } from "node:path";
import { parse as parseYaml } from "yaml";

export interface Kubeconfig {
  /** The API server's base URL, e.g. `https://127.0.0.1:6443`. */
  server: string;
  /** PEM of the CA that signed the server's certificate (else the system roots). */
  ca?: string;
  /** PEM client certificate and key (mutual TLS). */
  cert?: string;
  key?: string;
  /** Bearer token, sent as `Authorization: Bearer <token>`. */
  token?: string;
  insecureSkipTlsVerify?: boolean;
  /** The TLS server name to verify, when it differs from the URL's host. */
  tlsServerName?: string;
  /** The context's default namespace, if it names one. */
  namespace?: string;
}

type Fields = Record<string, unknown>;

interface RawKubeconfig {
  "current-context"?: string;
  clusters?: Array<{ name?: string; cluster?: Fields }>;
  users?: Array<{ name?: string; user?: Fields }>;
  contexts?: Array<{ name?: string; context?: Fields }>;
}

/**
 * Loads `path`, else the first existing file of `$KUBECONFIG` (a path list), else `~/.kube/config`, and
 * resolves its current context.
 */
export function loadKubeconfig(path?: string, env: NodeJS.ProcessEnv = process.env): Kubeconfig {
  const file = path ?? pickFile(env);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    throw new Error(`cannot read kubeconfig ${file}: ${(e as Error).message}`);
  }
  return parseKubeconfig(text, dirname(file), file);
}

function pickFile(env: NodeJS.ProcessEnv): string {
  const listed = (env.KUBECONFIG ?? "").split(delimiter).filter(Boolean);
  const found = listed.find((p) => existsSync(p));
  if (found) return found;
  if (listed[0]) return listed[0];
  return join(homedir(), ".kube", "config");
}

/** Parses kubeconfig text; relative file references resolve against `baseDir`. */
export function parseKubeconfig(text: string, baseDir = process.cwd(), source = "kubeconfig"): Kubeconfig {
  const raw = (parseYaml(text) ?? {}) as RawKubeconfig;
  const fail = (why: string): never => {
    throw new Error(`${source}: ${why}`);
  };
  const contextName = raw["current-context"] || fail("no current-context");
  const context = raw.contexts?.find((c) => c.name === contextName)?.context ?? fail(`context "${contextName}" not found`);
  const clusterName = str(context.cluster) ?? fail(`context "${contextName}" names no cluster`);
  const cluster = raw.clusters?.find((c) => c.name === clusterName)?.cluster ?? fail(`cluster "${clusterName}" not found`);
  const userName = str(context.user);
  const user = userName ? (raw.users?.find((u) => u.name === userName)?.user ?? fail(`user "${userName}" not found`)) : {};

  // `*-data` fields are base64 PEM; the others are file paths relative to the kubeconfig's directory.
  const material = (fields: Fields, data: string, file: string): string | undefined => {
    const inline = str(fields[data]);
    if (inline) return Buffer.from(inline, "base64").toString("utf8");
    const path = str(fields[file]);
    return path ? readFileSync(isAbsolute(path) ? path : join(baseDir, path), "utf8") : undefined;
  };

  const config: Kubeconfig = { server: str(cluster.server) ?? fail(`cluster "${clusterName}" has no server`) };
  const ca = material(cluster, "certificate-authority-data", "certificate-authority");
  if (ca) config.ca = ca;
  if (cluster["insecure-skip-tls-verify"] === true) config.insecureSkipTlsVerify = true;
  const serverName = str(cluster["tls-server-name"]);
  if (serverName) config.tlsServerName = serverName;
  const cert = material(user, "client-certificate-data", "client-certificate");
  const key = material(user, "client-key-data", "client-key");
  if (cert) config.cert = cert;
  if (key) config.key = key;
  const tokenFile = str(user.tokenFile);
  const token =
    str(user.token) ?? (tokenFile ? readFileSync(isAbsolute(tokenFile) ? tokenFile : join(baseDir, tokenFile), "utf8").trim() : undefined);
  if (token) config.token = token;
  const namespace = str(context.namespace);
  if (namespace) config.namespace = namespace;
  return config;
}

const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);
