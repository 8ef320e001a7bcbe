// The whole `main.ts` of a controller app: configuration from the environment of the contract, leader
// election, the controllers, and a clean stop. An app only says which controllers it runs:
//
//   await runControllerApp({ name: "csr-approver", setup: (app) => {
//     const csrs = app.informer<Csr>(csrResource);
//     app.runController({ name: "csr-approver", sources: [csrs], reconciler: ... });
//   }});
import { type NamingProfile, profileFromEnv } from "@orch/api";
import { busConnectionFromEnv, natsConnectOptions } from "@orch/bus-access";
import { ApiClient, Informer, type InformerOptions, type KubeObject, type ResourceRef, loadKubeconfig } from "@orch/client";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { type Controller, type ControllerOptions, runController } from "./controller.js";
import { EventBroadcaster, type EventRecorder } from "./events.js";
import { LeaderElector, type LeaderElectionOptions, leaseResource } from "./leader-election.js";
import { type Logger, createLogger } from "@orch/log";

export interface ControllerAppContext {
  name: string;
  /** Authenticated with the app's own kubeconfig credentials. */
  client: ApiClient;
  profile: NamingProfile;
  /** `ORCH_NATS_URL`, when set: informers then take events from NATS instead of HTTP watch. */
  natsUrl: string | undefined;
  /** Aborted when the app stops or loses leadership. */
  signal: AbortSignal;
  log: Logger;
  /** One informer per resource and selection in the process, shared by the controllers; stopped at exit. */
  informer<T extends KubeObject>(ref: ResourceRef, options?: Omit<InformerOptions, "ref" | "nats">): Informer<T>;
  /** `runController`, with the app's log and signal; the app stops it (waiting for its workers) at exit. */
  runController(options: Omit<ControllerOptions, "signal">): Controller;
  /**
   * A recorder of core/v1 Events with `component` as their source (Kubernetes' controllers name theirs
   * `deployment-controller`, `replicaset-controller`, …); all share the app's one event sink.
   */
  eventRecorder(component: string): EventRecorder;
}

export interface ControllerAppOptions {
  /** The app's name: log prefix, User-Agent, and the name of its Lease. */
  name: string;
  /** Builds the controllers; runs once this process is the leader. */
  setup: (app: ControllerAppContext) => void | Promise<void>;
  /** Leader election timings and lease; `false` to run without it (a single replica, or tests). */
  leaderElection?:
    | false
    | Partial<Pick<LeaderElectionOptions, "leaseDurationMs" | "renewDeadlineMs" | "retryPeriodMs" | "identity" | "namespace">>;
  /** Default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** How the process ends: default `process.exit`. Code 1 after lost leadership, so the supervisor restarts a fresh candidate. */
  exit?: (code: number) => void;
  /** Default: prefixed lines on stdout/stderr. */
  log?: Logger;
  /** Events the app sends at once (EventBroadcasterOptions.inFlight); default 1, as client-go's record library. */
  eventsInFlight?: number;
}

export interface ControllerApp {
  readonly client: ApiClient;
  /** The elector, when leader election is on. */
  readonly elector: LeaderElector | undefined;
  /** Stops everything (as SIGTERM does); resolves with the exit code once stopped. */
  stop(): Promise<number>;
  /** Resolves with the exit code when the app has stopped for any reason. */
  readonly done: Promise<number>;
  /**
   * Resolves once this process leads and every controller its setup started has listed: the app
   * works. Never, for a replica that waits for the lease, or when setup fails.
   */
  readonly working: Promise<void>;
}

/** Time allowed for a clean stop; the launcher sends SIGKILL after 5 s. */
const STOP_TIMEOUT_MS = 4_000;

/**
 * `$KUBECONFIG` (a path list), else the app's own identity `$ORCH_DATA_DIR/controllers/<app>.kubeconfig`
 * when the apiserver wrote one for it, else `$ORCH_DATA_DIR/kubeconfig` (the admin's).
 */
export function kubeconfigPath(env: NodeJS.ProcessEnv, app?: string): string | undefined {
  if (env.KUBECONFIG) return undefined; // loadKubeconfig resolves the list
  const dataDir = resolve(env.ORCH_DATA_DIR || ".orch");
  const own = app === undefined ? undefined : join(dataDir, "controllers", `${app}.kubeconfig`);
  return own && existsSync(own) ? own : join(dataDir, "kubeconfig");
}

/**
 * Kubernetes' --leader-elect-lease-duration, --leader-elect-renew-deadline and --leader-elect-retry-period,
 * in seconds (fractions allowed), from `ORCH_LEADER_ELECT_*_SECONDS`; unset ones keep the elector's defaults.
 */
export function leaderElectionTimings(
  env: NodeJS.ProcessEnv,
): Partial<Pick<LeaderElectionOptions, "leaseDurationMs" | "renewDeadlineMs" | "retryPeriodMs">> {
  const ms = (name: string): number | undefined => {
    const text = env[name];
    if (text === undefined || text === "") return undefined;
    const seconds = Number(text);
    if (!Number.isFinite(seconds) || seconds <= 0)
      throw new Error(`${name} must be a positive number of seconds, not ${JSON.stringify(text)}`);
    return seconds * 1000;
  };
  return {
    leaseDurationMs: ms("ORCH_LEADER_ELECT_LEASE_DURATION_SECONDS"),
    renewDeadlineMs: ms("ORCH_LEADER_ELECT_RENEW_DEADLINE_SECONDS"),
    retryPeriodMs: ms("ORCH_LEADER_ELECT_RETRY_PERIOD_SECONDS"),
  };
}

export async function runControllerApp(options: ControllerAppOptions): Promise<ControllerApp> {
  const env = options.env ?? process.env;
  const supervised = env.ORCH_SUPERVISED === "1";
  const log = options.log ?? createLogger(options.name);
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const profile = profileFromEnv(env);
  const bus = busConnectionFromEnv(env);
  const natsUrl = bus?.servers;
  const natsOptions = bus ? { connectOptions: natsConnectOptions(bus, options.name) } : undefined;
  const client = new ApiClient(loadKubeconfig(kubeconfigPath(env, options.name), env), { userAgent: options.name });

  const work = new AbortController();
  const informers = new Map<string, Informer<any>>();
  const controllers: Controller[] = [];
  let broadcaster: EventBroadcaster | undefined;
  const context: ControllerAppContext = {
    name: options.name,
    client,
    profile,
    natsUrl,
    signal: work.signal,
    log,
    informer: <T extends KubeObject>(ref: ResourceRef, informerOptions: Omit<InformerOptions, "ref" | "nats"> = {}) => {
      const key = JSON.stringify([
        ref.group,
        ref.version,
        ref.plural,
        informerOptions.namespace,
        informerOptions.labelSelector,
        informerOptions.fieldSelector,
        informerOptions.withoutManagedFields,
      ]);
      let informer = informers.get(key) as Informer<T> | undefined;
      if (!informer) {
        informer = new Informer<T>(client, {
          onError: (e) => log.error(`informer ${ref.plural}`, e),
          ...informerOptions,
          ref,
          ...(natsOptions ? { nats: natsOptions } : {}),
        });
        informers.set(key, informer);
      }
      return informer;
    },
    runController: (controllerOptions) => {
      const controller = runController({ log: log.child(controllerOptions.name), ...controllerOptions, signal: work.signal });
      controllers.push(controller);
      controller.ready.catch((e) => log.error(`controller ${controllerOptions.name} did not start`, e));
      return controller;
    },
    eventRecorder: (component) => {
      broadcaster ??= new EventBroadcaster({ client, log: log.child("events"), inFlight: options.eventsInFlight });
      return broadcaster.recorder(component);
    },
  };

  /** Runs setup, then holds until the work is to stop; then stops controllers and informers. */
  const lead = async (signal: AbortSignal): Promise<void> => {
    const stopWork = () => {
      work.abort();
      if (!stopping) exitLost();
    };
    signal.addEventListener("abort", stopWork, { once: true });
    try {
      await options.setup(context);
      void Promise.all(controllers.map((c) => c.ready)).then(
        () => resolveWorking(),
        () => undefined,
      );
    } catch (e) {
      log.error("setup failed", e);
      void stop(1);
    }
    if (!work.signal.aborted) await new Promise<void>((resolve) => work.signal.addEventListener("abort", () => resolve(), { once: true }));
    await Promise.all(controllers.map((c) => c.stop()));
    broadcaster?.stop();
    await Promise.all([...informers.values()].map((i) => i.stop()));
  };

  let resolveDone!: (code: number) => void;
  const done = new Promise<number>((resolve) => (resolveDone = resolve));
  let resolveWorking!: () => void;
  const working = new Promise<void>((resolve) => (resolveWorking = resolve));

  const election = options.leaderElection === false ? undefined : (options.leaderElection ?? {});
  const timings = leaderElectionTimings(env);
  const elector = election
    ? new LeaderElector({
        client,
        ref: leaseResource(profile.apiDomain),
        namespace: election.namespace ?? "default",
        name: options.name,
        identity: election.identity,
        leaseDurationMs: election.leaseDurationMs ?? timings.leaseDurationMs,
        renewDeadlineMs: election.renewDeadlineMs ?? timings.renewDeadlineMs,
        retryPeriodMs: election.retryPeriodMs ?? timings.retryPeriodMs,
        log,
        onStartedLeading: lead,
      })
    : undefined;

  let stopping: Promise<number> | undefined;
  const stop = (code = 0): Promise<number> => {
    // The first reason to stop decides the exit code (1: setup failed or leadership was lost).
    stopping ??= (async () => {
      work.abort();
      const timeout = new Promise<"timeout">((r) => setTimeout(() => r("timeout"), STOP_TIMEOUT_MS).unref());
      const stopped = (async () => {
        if (elector) await elector.stop();
        else await running;
      })();
      if ((await Promise.race([stopped, timeout])) === "timeout") {
        log.error(`did not stop within ${STOP_TIMEOUT_MS} ms; exiting anyway`);
      }
      removeHandlers();
      client.close();
      resolveDone(code);
      exit(code);
      return code;
    })();
    return stopping;
  };

  /**
   * Leadership lost, not given up: another replica takes the lease once it expires, and this one must have
   * stopped writing by then. A reconcile in flight (a batch of creates against a slow apiserver) may take
   * far longer than that to notice, so the process exits now, as kube-controller-manager does
   * (klog.FlushAndExit in OnStoppedLeading), instead of waiting for its workers.
   */
  const exitLost = (): void => {
    log.error("lost leadership: exiting at once");
    stopping = Promise.resolve(1);
    removeHandlers();
    resolveDone(1);
    exit(1);
  };

  const onSignal = (): void => void stop(0);
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  // Under the launcher stdin is a pipe from it: when it closes, the launcher is gone, and so are we.
  const onStdinEnd = (): void => void stop(0);
  if (supervised) process.stdin.on("end", onStdinEnd).on("error", onStdinEnd).resume();
  const removeHandlers = (): void => {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    if (supervised) {
      process.stdin.off("end", onStdinEnd).off("error", onStdinEnd);
      process.stdin.pause();
    }
  };

  log.info(`starting (api ${client.config.server}, events ${natsUrl ?? "HTTP watch"}${elector ? `, identity ${elector.identity}` : ""})`);
  const running: Promise<void> = elector
    ? elector.run().then(() => {
        // Over without a stop: leadership was lost. In-flight work cannot be trusted to have noticed, so
        // exit (as client-go's users do) and let the supervisor start a fresh candidate.
        if (!stopping) void stop(1);
      })
    : lead(new AbortController().signal);

  return { client, elector, stop: () => stop(0), done, working };
}
