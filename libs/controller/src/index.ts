// @orch/controller: the runtime every controller app is built on — a work queue of keys, the
// reconciler contract and its runner, status writes, leader election on a Lease, and the app `main`.
export { type Clock, FakeClock, type TimerHandle, realClock, settle } from "./clock.js";
export {
  type DefaultRateLimiterOptions,
  ExponentialBackoffRateLimiter,
  MaxOfRateLimiter,
  type RateLimiter,
  TokenBucketRateLimiter,
  defaultControllerRateLimiter,
} from "./queue/rate-limiter.js";
export { WorkQueue, type WorkQueueOptions } from "./queue/work-queue.js";
export { type ControllerEvent, type Predicate, allOf, anyOf, generationChanged, ignoreStatusOnlyChanges } from "./predicates.js";
export {
  type Controller,
  type ControllerOptions,
  type InformerLike,
  type ReconcileContext,
  type Reconciler,
  type Result,
  type Source,
  type SourceSpec,
  type StopOptions,
  TerminalError,
  ownerKeys,
  runController,
} from "./controller.js";
export { type StatusClient, type WriteStatusOptions, readFromApi, writeStatus } from "./status.js";
export {
  type Lease,
  type LeaseClient,
  type LeaseSpec,
  LeaderElector,
  type LeaderElectionOptions,
  defaultIdentity,
  leaseResource,
} from "./leader-election.js";
export {
  EventBroadcaster,
  type EventBroadcasterOptions,
  type EventRecorder,
  type EventType,
  SendLimit,
  coreEventsResource,
} from "./events.js";
export { type ControllerApp, type ControllerAppContext, type ControllerAppOptions, kubeconfigPath, runControllerApp } from "./app.js";
export { type Logger, createLogger, silentLogger } from "@orch/log";
