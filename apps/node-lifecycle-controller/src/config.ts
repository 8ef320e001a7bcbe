// Kubernetes' --node-monitor-grace-period (40 s) and --node-monitor-period (5 s), from the environment.
export interface LifecycleConfig {
  gracePeriodMs: number;
  monitorPeriodMs: number;
}

function seconds(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const text = env[name];
  if (text === undefined || text.trim() === "") return fallback * 1000;
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number of seconds, not ${JSON.stringify(text)}`);
  return Math.round(value * 1000);
}

export function lifecycleConfig(env: NodeJS.ProcessEnv): LifecycleConfig {
  return {
    gracePeriodMs: seconds(env, "ORCH_NODE_MONITOR_GRACE_SECONDS", 40),
    monitorPeriodMs: seconds(env, "ORCH_NODE_MONITOR_PERIOD_SECONDS", 5),
  };
}
