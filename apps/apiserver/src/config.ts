// The apiserver's settings, all from the environment of the contract (see README "Configuration").
import { type NamingProfile, profileFromEnv } from "@orch/api";
import { type BusConnection, busConnectionFromEnv } from "@orch/bus-access";
import { resolve } from "node:path";
import { type PortRange, parseIpv4Range, parsePortRange } from "@orch/registry";
import { type FlowControlConfig, flowControlDefaults } from "./flow-control/priority-levels.js";

export interface ApiserverConfig {
  /** Keys, credentials, kubeconfigs, and the SQLite database unless `postgresUrl` is set. */
  dataDir: string;
  /**
   * ORCH_STORAGE: a `postgres://…` URL stores the cluster's state in that PostgreSQL database
   * (docs/storage.md); unset, the embedded SQLite file `<dataDir>/orch.db`.
   */
  postgresUrl?: string;
  port: number;
  bind: string;
  /**
   * ORCH_EXTERNAL_URL: the address clients reach the apiserver at when it is not its own — a load
   * balancer in front of several replicas (`https://lb.example:6443`). The kubeconfigs name it, the
   * serving certificate covers its host, and the default token issuer is it, the same for every replica.
   */
  externalUrl?: string;
  /** The event bus (ORCH_NATS_URL and its credential files); no events published when absent. */
  bus: BusConnection | undefined;
  /**
   * ORCH_NATS_AUTHORIZATION_FILE: where to keep the NATS server's `authorization` block, derived from
   * RBAC (docs/security.md); the NATS server includes it and reloads it when it changes.
   */
  busAuthorizationFile?: string;
  profile: NamingProfile;
  /** Static bearer tokens (`token,user,uid,"groups"` per line), from ORCH_TOKEN_FILE. */
  tokenFile?: string;
  /** Change history kept for watch and consistent pagination. */
  history: { maxRevisions: number; maxAgeMs: number; compactEveryMs: number };
  /** What the NATS stream keeps of the event history (oldest dropped first). */
  events?: { maxMessages: number; maxAgeMs: number; replicas: number };
  /** Service account tokens; every field has a default (see `serviceAccountDefaults`). */
  serviceAccounts?: Partial<ServiceAccountConfig>;
  /** Request-header authentication from a trusted front proxy; off when absent. */
  requestHeader?: RequestHeaderAuthConfig;
  /** How long a request (not a watch) may run before it is answered 504 and stopped (Kubernetes' --request-timeout). */
  requestTimeoutMs?: number;
  /** How long a connection may take for its TLS handshake and request headers; default 32 s (Kubernetes' ReadHeaderTimeout). */
  headerTimeoutMs?: number;
  /** Audit logging (docs/audit.md); off when absent. */
  audit?: AuditConfig;
  /**
   * ORCH_ENCRYPTION_PROVIDER_CONFIG, Kubernetes' --encryption-provider-config: an EncryptionConfiguration
   * file. Unset: `<dataDir>/encryption-config.yaml`, written on first start (docs/encryption-at-rest.md).
   */
  encryptionProviderConfig?: string;
  /** Concurrency and watch limits (flow-control/); every field has a default (`flowControlDefaults`). */
  flowControl?: FlowControlConfig;
  /** How long an Event lives after its last write (ORCH_EVENT_TTL_SECONDS, Kubernetes' --event-ttl); default 1 h. */
  eventTtlMs?: number;
  /** ORCH_SERVICE_CLUSTER_IP_RANGE, Kubernetes' --service-cluster-ip-range: where Services' cluster IPs come from. */
  serviceClusterIPRange?: string;
  /** ORCH_SERVICE_NODE_PORT_RANGE, Kubernetes' --service-node-port-range (`30000-32767`): where node ports come from. */
  serviceNodePortRange?: PortRange;
}

/** Kubernetes' --audit-policy-file, --audit-log-path, --audit-log-maxsize and --audit-log-maxbackup (ORCH_AUDIT_*). */
export interface AuditConfig {
  policyFile?: string;
  /** A file, or `-` for standard output. */
  logPath?: string;
  /** Megabytes before the log file is rotated; 0 for 100, as Kubernetes. */
  maxSizeMB: number;
  /** Rotated files kept; 0 keeps them all, as Kubernetes. */
  maxBackups: number;
}

/**
 * Kubernetes' --requestheader-client-ca-file and --requestheader-allowed-names, from
 * ORCH_REQUESTHEADER_CLIENT_CA_FILE and ORCH_REQUESTHEADER_ALLOWED_NAMES (comma-separated). The headers
 * are Kubernetes' usual ones: X-Remote-User, X-Remote-Group, X-Remote-Extra-<key>.
 */
export interface RequestHeaderAuthConfig {
  clientCaFile: string;
  /** Common names the proxy's certificate may have; empty for any the CA signed. */
  allowedNames: string[];
}

export interface ServiceAccountConfig {
  /**
   * `iss` of the tokens (ORCH_SA_ISSUER). Unset: Kubernetes' in-cluster name in the `kubernetes`
   * profile, the apiserver's own URL in the `orch` profile (so that discovery is found at
   * `<iss>/.well-known/openid-configuration`, as OIDC expects).
   */
  issuer?: string;
  /** The apiserver's own audiences (ORCH_API_AUDIENCES, Kubernetes' --api-audiences); empty: the issuer. */
  audiences: string[];
  /** The longest token a TokenRequest gets (ORCH_SA_MAX_EXPIRATION_SECONDS); 0 for no limit. */
  maxExpirationSeconds: number;
  /** Where the discovery document says the key set is (ORCH_SA_JWKS_URI); unset: the apiserver's `/openid/v1/jwks`. */
  jwksUri?: string;
  /** Serve the discovery document and key set without authentication (ORCH_SA_DISCOVERY_PUBLIC=true). */
  publicDiscovery: boolean;
}

/** Kubernetes' bounds for --service-account-max-token-expiration: 1 hour to 2^32 seconds, or unset. */
const MIN_MAX_EXPIRATION = 3600;
const MAX_MAX_EXPIRATION = 2 ** 32;
/** A day: Kubernetes sets no maximum, but a year-long token from `kubectl create token --duration` is rarely meant. */
export const DEFAULT_MAX_EXPIRATION_SECONDS = 86_400;

export const serviceAccountDefaults = (c: Partial<ServiceAccountConfig> = {}): ServiceAccountConfig => ({
  audiences: [],
  maxExpirationSeconds: DEFAULT_MAX_EXPIRATION_SECONDS,
  publicDiscovery: false,
  ...c,
});

const int = (value: string | undefined, fallback: number, name: string): number => {
  if (value === undefined || value === "") return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, not ${JSON.stringify(value)}`);
  return n;
};

function eventTtlFromEnv(env: NodeJS.ProcessEnv): number {
  const seconds = int(env.ORCH_EVENT_TTL_SECONDS, 3600, "ORCH_EVENT_TTL_SECONDS");
  if (seconds === 0) throw new Error("ORCH_EVENT_TTL_SECONDS must be positive");
  return seconds;
}

function serviceAccountsFromEnv(env: NodeJS.ProcessEnv): ServiceAccountConfig {
  const max = int(env.ORCH_SA_MAX_EXPIRATION_SECONDS, DEFAULT_MAX_EXPIRATION_SECONDS, "ORCH_SA_MAX_EXPIRATION_SECONDS");
  if (max !== 0 && (max < MIN_MAX_EXPIRATION || max > MAX_MAX_EXPIRATION)) {
    throw new Error(`ORCH_SA_MAX_EXPIRATION_SECONDS must be 0 (no limit) or between ${MIN_MAX_EXPIRATION} and 2^32, not ${max}`);
  }
  const issuer = env.ORCH_SA_ISSUER || undefined;
  // Kubernetes' rule for --service-account-issuer: anything with a colon must be a URL.
  if (issuer?.includes(":") && !URL.canParse(issuer)) throw new Error(`ORCH_SA_ISSUER contains a ':' but is not a URL: ${issuer}`);
  const flag = (env.ORCH_SA_DISCOVERY_PUBLIC ?? "").toLowerCase();
  if (!["", "true", "false"].includes(flag))
    throw new Error(`ORCH_SA_DISCOVERY_PUBLIC must be "true" or "false", not ${JSON.stringify(flag)}`);
  return serviceAccountDefaults({
    ...(issuer ? { issuer } : {}),
    audiences: (env.ORCH_API_AUDIENCES ?? "")
      .split(",")
      .map((a) => a.trim())
      .filter(Boolean),
    maxExpirationSeconds: max,
    ...(env.ORCH_SA_JWKS_URI ? { jwksUri: env.ORCH_SA_JWKS_URI } : {}),
    publicDiscovery: flag === "true",
  });
}

/** Kubernetes' flag names where it has one; the watch limits are orch's own. */
function flowControlFromEnv(env: NodeJS.ProcessEnv): FlowControlConfig {
  const d = flowControlDefaults;
  const config: FlowControlConfig = {
    maxRequestsInflight: int(env.ORCH_MAX_REQUESTS_INFLIGHT, d.maxRequestsInflight, "ORCH_MAX_REQUESTS_INFLIGHT"),
    maxMutatingRequestsInflight: int(
      env.ORCH_MAX_MUTATING_REQUESTS_INFLIGHT,
      d.maxMutatingRequestsInflight,
      "ORCH_MAX_MUTATING_REQUESTS_INFLIGHT",
    ),
    queueLengthLimit: int(env.ORCH_FLOW_QUEUE_LENGTH_LIMIT, d.queueLengthLimit, "ORCH_FLOW_QUEUE_LENGTH_LIMIT"),
    maxWatches: int(env.ORCH_MAX_WATCHES, d.maxWatches, "ORCH_MAX_WATCHES"),
    maxWatchesPerUser: int(env.ORCH_MAX_WATCHES_PER_USER, d.maxWatchesPerUser, "ORCH_MAX_WATCHES_PER_USER"),
  };
  // Kubernetes' rule: the two in-flight limits "must add up to something positive".
  if (config.maxRequestsInflight + config.maxMutatingRequestsInflight === 0) {
    throw new Error("ORCH_MAX_REQUESTS_INFLIGHT and ORCH_MAX_MUTATING_REQUESTS_INFLIGHT must add up to something positive");
  }
  return config;
}

function auditFromEnv(env: NodeJS.ProcessEnv): AuditConfig | undefined {
  const policyFile = env.ORCH_AUDIT_POLICY_FILE || undefined;
  const logPath = env.ORCH_AUDIT_LOG_PATH || undefined;
  if (!policyFile && !logPath) return undefined;
  return {
    ...(policyFile ? { policyFile: resolve(policyFile) } : {}),
    ...(logPath ? { logPath: logPath === "-" ? "-" : resolve(logPath) } : {}),
    maxSizeMB: int(env.ORCH_AUDIT_LOG_MAXSIZE, 0, "ORCH_AUDIT_LOG_MAXSIZE"),
    maxBackups: int(env.ORCH_AUDIT_LOG_MAXBACKUP, 0, "ORCH_AUDIT_LOG_MAXBACKUP"),
  };
}

/** ORCH_STORAGE: only a PostgreSQL URL, so that a typo refuses start-up instead of opening an empty SQLite file. */
function postgresUrlFromEnv(env: NodeJS.ProcessEnv): string | undefined {
  const value = env.ORCH_STORAGE?.trim();
  if (!value) return undefined;
  if (!/^postgres(ql)?:\/\//.test(value)) {
    throw new Error("ORCH_STORAGE must be a postgres:// (or postgresql://) URL, or unset for the SQLite file in ORCH_DATA_DIR");
  }
  return value;
}

function externalUrlFromEnv(env: NodeJS.ProcessEnv): { externalUrl?: string } {
  const value = env.ORCH_EXTERNAL_URL?.trim();
  if (!value) return {};
  const url = URL.canParse(value) ? new URL(value) : undefined;
  if (url?.protocol !== "https:" || url.pathname !== "/" || url.search || url.username) {
    throw new Error(`ORCH_EXTERNAL_URL must be an https://host[:port] URL, not ${JSON.stringify(value)}`);
  }
  return { externalUrl: url.origin };
}

export function configFromEnv(env: NodeJS.ProcessEnv = process.env): ApiserverConfig {
  const postgresUrl = postgresUrlFromEnv(env);
  return {
    dataDir: resolve(env.ORCH_DATA_DIR || ".orch"),
    ...(postgresUrl ? { postgresUrl } : {}),
    port: int(env.ORCH_PORT, 6443, "ORCH_PORT"),
    bind: env.ORCH_BIND || "127.0.0.1",
    ...externalUrlFromEnv(env),
    bus: busConnectionFromEnv(env),
    ...(env.ORCH_NATS_AUTHORIZATION_FILE ? { busAuthorizationFile: resolve(env.ORCH_NATS_AUTHORIZATION_FILE) } : {}),
    profile: profileFromEnv(env),
    tokenFile: env.ORCH_TOKEN_FILE ? resolve(env.ORCH_TOKEN_FILE) : undefined,
    history: {
      maxRevisions: int(env.ORCH_HISTORY_REVISIONS, 100_000, "ORCH_HISTORY_REVISIONS"),
      maxAgeMs: int(env.ORCH_HISTORY_SECONDS, 3600, "ORCH_HISTORY_SECONDS") * 1000,
      compactEveryMs: int(env.ORCH_COMPACT_INTERVAL_SECONDS, 60, "ORCH_COMPACT_INTERVAL_SECONDS") * 1000,
    },
    events: {
      maxMessages: int(env.ORCH_EVENTS_MAX_MESSAGES, 1_000_000, "ORCH_EVENTS_MAX_MESSAGES"),
      maxAgeMs: int(env.ORCH_EVENTS_MAX_AGE_SECONDS, 24 * 3600, "ORCH_EVENTS_MAX_AGE_SECONDS") * 1000,
      replicas: int(env.ORCH_EVENTS_REPLICAS, 1, "ORCH_EVENTS_REPLICAS"),
    },
    serviceAccounts: serviceAccountsFromEnv(env),
    requestTimeoutMs: int(env.ORCH_REQUEST_TIMEOUT_SECONDS, 60, "ORCH_REQUEST_TIMEOUT_SECONDS") * 1000,
    eventTtlMs: eventTtlFromEnv(env) * 1000,
    // Parsed here so that a bad range refuses start-up.
    ...(env.ORCH_SERVICE_CLUSTER_IP_RANGE ? { serviceClusterIPRange: parseIpv4Range(env.ORCH_SERVICE_CLUSTER_IP_RANGE).cidr } : {}),
    ...(env.ORCH_SERVICE_NODE_PORT_RANGE ? { serviceNodePortRange: parsePortRange(env.ORCH_SERVICE_NODE_PORT_RANGE) } : {}),
    audit: auditFromEnv(env),
    ...(env.ORCH_ENCRYPTION_PROVIDER_CONFIG ? { encryptionProviderConfig: resolve(env.ORCH_ENCRYPTION_PROVIDER_CONFIG) } : {}),
    flowControl: flowControlFromEnv(env),
    ...(env.ORCH_REQUESTHEADER_CLIENT_CA_FILE
      ? {
          requestHeader: {
            clientCaFile: resolve(env.ORCH_REQUESTHEADER_CLIENT_CA_FILE),
            allowedNames: (env.ORCH_REQUESTHEADER_ALLOWED_NAMES ?? "")
              .split(",")
              .map((n) => n.trim())
              .filter(Boolean),
          },
        }
      : {}),
  };
}
