// The Ready, Status and Restarts cells of `kubectl get pods`, as Kubernetes' printPod
// (pkg/printers/internalversion/printers.go) derives them from the container statuses: a waiting or
// terminated container's reason (CrashLoopBackOff, ContainerCreating, Error, Completed) wins over the
// phase, a deleted pod is Terminating, and restarts say how long ago the last one was.
import type { Pod } from "@orch/api";
import { humanDuration } from "@orch/machinery";

interface Cells {
  ready: string;
  status: string;
  restarts: string;
}

export function podCells(pod: Pod, now = Date.now()): Cells {
  const statuses = pod.status?.containerStatuses ?? [];
  const total = pod.spec?.containers?.length ?? 0;
  let reason = pod.status?.reason || pod.status?.phase || "";
  if (pod.status?.conditions?.some((c) => c.type === "PodScheduled" && c.reason === "SchedulingGated")) reason = "SchedulingGated";
  let restarts = 0;
  let readyContainers = 0;
  let hasRunning = false;
  let lastRestart = 0;
  for (let i = statuses.length - 1; i >= 0; i--) {
    const c = statuses[i]!;
    restarts += c.restartCount ?? 0;
    const finished = c.lastState?.terminated?.finishedAt;
    if (finished) lastRestart = Math.max(lastRestart, Date.parse(finished));
    const { waiting, terminated, running } = c.state ?? {};
    if (waiting?.reason) reason = waiting.reason;
    else if (terminated?.reason) reason = terminated.reason;
    else if (terminated) reason = terminated.signal ? `Signal:${terminated.signal}` : `ExitCode:${terminated.exitCode ?? 0}`;
    else if (c.ready && running) {
      hasRunning = true;
      readyContainers++;
    }
  }
  // A completed container beside one still running: the pod is running (or not ready).
  if (reason === "Completed" && hasRunning) {
    reason = pod.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ? "Running" : "NotReady";
  }
  const phase = pod.status?.phase;
  if (pod.metadata.deletionTimestamp && pod.status?.reason === "NodeLost") reason = "Unknown";
  else if (pod.metadata.deletionTimestamp && phase !== "Succeeded" && phase !== "Failed") reason = "Terminating";
  const restartsCell = restarts !== 0 && lastRestart > 0 ? `${restarts} (${humanDuration(now - lastRestart)} ago)` : String(restarts);
  return { ready: `${readyContainers}/${total}`, status: reason, restarts: restartsCell };
}
