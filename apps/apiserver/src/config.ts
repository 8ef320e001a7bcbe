// The apiserver's settings, all from the environment of the contract (see README "Configuration").
import { type NamingProfile, profileFromEnv } from "@orch/api";
import { resolve } from "node:path";

export interface ApiserverConfig {
  dataDir: string;
  port: number;
  bind: string;
  natsUrl: string | undefined;
  profile: NamingProfile;
  /** Static bearer tokens (`token,user,uid,"groups"` per line), from ORCH_TOKEN_FILE. */
  tokenFile?: string;
  /** Change history kept for watch and consistent pagination. */
  history: { maxRevisions: number; maxAgeMs: number; compactEveryMs: number };
}

const int = (value: string | undefined, fallback: number, name: string): number => {
  if (value === undefined || value === "") return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, not ${JSON.stringify(value)}`);
  return n;
};

export function configFromEnv(env: NodeJS.ProcessEnv = process.env): ApiserverConfig {
  return {
    dataDir: resolve(env.ORCH_DATA_DIR || ".orch"),
    port: int(env.ORCH_PORT, 6443, "ORCH_PORT"),
    bind: env.ORCH_BIND || "127.0.0.1",
    natsUrl: env.ORCH_NATS_URL || undefined,
    profile: profileFromEnv(env),
    tokenFile: env.ORCH_TOKEN_FILE ? resolve(env.ORCH_TOKEN_FILE) : undefined,
    history: {
      maxRevisions: int(env.ORCH_HISTORY_REVISIONS, 100_000, "ORCH_HISTORY_REVISIONS"),
      maxAgeMs: int(env.ORCH_HISTORY_SECONDS, 3600, "ORCH_HISTORY_SECONDS") * 1000,
      compactEveryMs: int(env.ORCH_COMPACT_INTERVAL_SECONDS, 60, "ORCH_COMPACT_INTERVAL_SECONDS") * 1000,
    },
  };
}
