// The flow-control filter (Kubernetes' WithPriorityAndFairness): classify the request, say so in the
// X-Kubernetes-PF-* headers, count a watch against the watch limits, then take a seat of its priority
// level, at once or after waiting in its user's queue; 429 when there is none.
import type { NamingProfile } from "@orch/api";
import { errors } from "@orch/machinery";
import type { Context, MiddlewareHandler } from "hono";
import type { Env } from "../http/filters.js";
import { respondError } from "../http/respond.js";
import { ConcurrencyBudget, Rejected, type Seat } from "./concurrency-budget.js";
import { type FlowControlConfig, PRIORITY_LEVELS, budgetOptions, classify } from "./priority-levels.js";
import { WatchCounter } from "./watch-limit.js";

/** Kubernetes' header names (k8s.io/api/flowcontrol/v1 ResponseHeaderMatched*). */
export const FLOW_SCHEMA_UID_HEADER = "X-Kubernetes-PF-FlowSchema-UID";
export const PRIORITY_LEVEL_UID_HEADER = "X-Kubernetes-PF-PriorityLevel-UID";

/** Kubernetes' answer when it drops a request, word for word; it starts with Retry-After 1 s. */
const TOO_MANY_REQUESTS = "Too many requests, please try again later.";
const TOO_MANY_WATCHES = "Too many watches, please try again later.";
const RETRY_AFTER_SECONDS = 1;

export class FlowControl {
  readonly budget: ConcurrencyBudget;
  readonly watches: WatchCounter;

  constructor(
    config: FlowControlConfig,
    queueWaitMs: number,
    private readonly profile: NamingProfile,
  ) {
    this.budget = new ConcurrencyBudget(budgetOptions(config, queueWaitMs));
    this.watches = new WatchCounter({ total: config.maxWatches, perUser: config.maxWatchesPerUser });
  }

  /**
   * The filter. A watch holds a seat until its stream has started (its handler returns then), as in
   * Kubernetes, and its place in the watch count until its connection closes.
   */
  filter(): MiddlewareHandler<Env> {
    return async (c, next) => {
      const user = c.get("user");
      const info = c.get("info");
      const schema = classify(user, info, this.profile);
      const out = c.env.outgoing;
      // On the Node response, so that every answer carries them: a handler's Response, a watch stream, a 429.
      out.setHeader(FLOW_SCHEMA_UID_HEADER, schema.uid);
      out.setHeader(PRIORITY_LEVEL_UID_HEADER, schema.level.uid);

      const exempt = schema.level === PRIORITY_LEVELS.exempt;
      if (info?.verb === "watch") {
        const closeWatch = this.watches.tryOpen(user.username, exempt);
        if (!closeWatch) return tooMany(TOO_MANY_WATCHES);
        out.once("close", closeWatch);
      }
      if (exempt) return next();

      const flowKey = `${schema.name}/${user.username}`;
      let seat: Seat;
      try {
        seat = this.budget.tryAcquire(schema.level.name, flowKey) ?? (await this.budget.wait(schema.level.name, flowKey, leaving(c)));
      } catch (e) {
        if (e instanceof Rejected) return tooMany(TOO_MANY_REQUESTS);
        throw e;
      }
      try {
        await next();
      } finally {
        seat.release();
      }
    };
  }
}

function tooMany(message: string): Response {
  return respondError(errors.tooManyRequests(message, RETRY_AFTER_SECONDS));
}

/** Aborts when the client goes away while its request waits in a queue. */
function leaving(c: Context<Env>): AbortSignal {
  const abort = new AbortController();
  c.env.outgoing.once("close", () => abort.abort());
  return abort.signal;
}
