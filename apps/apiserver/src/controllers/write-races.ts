// A controller's write that lost a race: the object was deleted (404) or changed since it was read
// (409). Either way the change that won queues the key again, so the write is simply dropped.
import { StatusError } from "@orch/machinery";

export const lostRace = (e: unknown): boolean => e instanceof StatusError && (e.code === 404 || e.code === 409);
