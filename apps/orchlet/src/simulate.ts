// Failure injection: the pod annotation `<domain>/orchlet-simulate` (orch.io or kubernetes.io, by the
// naming profile) lists, comma-separated, how the pod's containers misbehave:
//   never-ready          the containers run but never pass readiness
//   crash-loop           each container exits with code 1 soon after it starts, every time
//   slow-start=<dur>     the containers are created only after this long (Go duration: 1m30s, 500ms)
//   exit=<code>          each container exits with this code soon after it starts
// What follows an exit is the pod's restartPolicy, as with a real container.
import type { NamingProfile } from "@orch/api";

export interface Simulation {
  neverReady: boolean;
  /** The exit code each container ends with after running a while; undefined: it runs until stopped. */
  exitCode: number | undefined;
  slowStartMs: number;
  /** Directives that were not understood (reported as a Warning event, otherwise ignored). */
  unknown: string[];
}

export const simulateAnnotation = (profile: NamingProfile): string => `${profile.wellKnownDomain}/orchlet-simulate`;

const UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Go's time.ParseDuration, in milliseconds; undefined when the text is not one. */
export function parseDuration(text: string): number | undefined {
  if (text === "0") return 0;
  const re = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/y;
  let total = 0;
  let at = 0;
  while (at < text.length) {
    re.lastIndex = at;
    const m = re.exec(text);
    if (!m) return undefined;
    total += Number(m[1]) * UNITS[m[2]!]!;
    at = re.lastIndex;
  }
  return at === 0 ? undefined : total;
}

export function parseSimulation(value: string | undefined): Simulation {
  const sim: Simulation = { neverReady: false, exitCode: undefined, slowStartMs: 0, unknown: [] };
  for (const raw of (value ?? "").split(",")) {
    const directive = raw.trim();
    if (directive === "") continue;
    const [name, arg] = directive.split("=", 2) as [string, string | undefined];
    if (name === "never-ready" && arg === undefined) sim.neverReady = true;
    else if (name === "crash-loop" && arg === undefined) sim.exitCode = 1;
    else if (name === "exit" && arg !== undefined && /^\d{1,3}$/.test(arg) && Number(arg) <= 255) sim.exitCode = Number(arg);
    else if (name === "slow-start" && arg !== undefined && parseDuration(arg) !== undefined) sim.slowStartMs = parseDuration(arg)!;
    else sim.unknown.push(directive);
  }
  return sim;
}
