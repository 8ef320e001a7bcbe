// A tiny logger: lines with a name prefix, so the output of several controllers in one process (and
// of several processes under the launcher) says who is speaking.

export interface Logger {
  info(message: string): void;
  error(message: string, error?: unknown): void;
  /** The same output with one more name in the prefix: `[app] [controller] message`. */
  child(name: string): Logger;
}

export interface LoggerOptions {
  /** Default: info to stdout, errors to stderr. */
  write?: (line: string, level: "info" | "error") => void;
}

const defaultWrite = (line: string, level: "info" | "error"): void => {
  (level === "error" ? process.stderr : process.stdout).write(`${line}\n`);
};

/** Messages of errors, without stacks for the expected kinds (API errors carry their Status message). */
export function describeError(error: unknown): string {
  if (error instanceof Error) return error.name === "ApiError" || error.name === "ExpiredError" ? error.message : (error.stack ?? error.message);
  return String(error);
}

export function createLogger(names: string[] = [], options: LoggerOptions = {}): Logger {
  const write = options.write ?? defaultWrite;
  const prefix = names.map((n) => `[${n}] `).join("");
  return {
    info: (message) => write(`${prefix}${message}`, "info"),
    error: (message, error) => write(`${prefix}${message}${error === undefined ? "" : `: ${describeError(error)}`}`, "error"),
    child: (name) => createLogger([...names, name], options),
  };
}

/** Drops everything (tests, or callers that log elsewhere). */
export const silentLogger: Logger = {
  info: () => undefined,
  error: () => undefined,
  child: () => silentLogger,
};
