// Waiting in tests for the system to reach a state, instead of sleeping for a time that is too long on a
// fast machine and too short on a loaded one.

export interface EventuallyOptions {
  /** Fail after this long (default 10 s). */
  timeoutMs?: number;
  /** Pause between two checks (default 20 ms). */
  intervalMs?: number;
}

/**
 * Calls `check` until it returns something other than `undefined` or `false`, and returns that; fails
 * after `timeoutMs`, naming `what`. An error thrown by `check` fails at once: a check that may fail on
 * the way (a server restarting) catches that itself.
 */
export async function eventually<T>(
  what: string,
  check: () => T | undefined | false | Promise<T | undefined | false>,
  options: EventuallyOptions = {},
): Promise<T> {
  const { timeoutMs = 10_000, intervalMs = 20 } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() >= deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
