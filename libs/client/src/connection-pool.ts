// undici's connection pool and its request call, without the rest of undici: its index also loads fetch,
// WebSocket, caches and mocks, about 1 MB more to evaluate at every controller's start (~55 ms of CPU
// against ~15 ms for these parts, docs/benchmarks.md). The types are undici's own (undici-parts.d.ts).
/// <reference path="./undici-parts.d.ts" />
import type { Dispatcher, Pool } from "undici";
import request from "undici/lib/api/api-request.js";
import PoolClass from "undici/lib/dispatcher/pool.js";

/** Kept-alive connections to one origin, shared by the requests sent through it. */
export interface ConnectionPool {
  request(options: Dispatcher.RequestOptions): Promise<Dispatcher.ResponseData>;
  /** Closes every connection at once, requests in flight failing. */
  destroy(): Promise<void>;
}

export function connectionPool(origin: string, options: Pool.Options): ConnectionPool {
  const pool = new PoolClass(origin, options);
  return {
    // undici's index installs this on every dispatcher's prototype; called on the pool it is the same call.
    request: (requestOptions) => request.call(pool, requestOptions),
    destroy: () => pool.destroy(),
  };
}
