// @orch/log: the one logger of every orch process — structured (one JSON object per line, pino), with
// levels (ORCH_LOG_LEVEL: debug, info, warn, error; default info). A line names its process and
// component (`name`: `apiserver`, `deployment-controller/deployment`); the launcher prints the lines of
// the processes it runs as readable text, and anything else can collect them as they are.
import { pino } from "pino";

export type Fields = Record<string, unknown>;

export interface Logger {
  debug(message: string, fields?: Fields): void;
  info(message: string, fields?: Fields): void;
  warn(message: string, fields?: Fields): void;
  /** An error, with its cause: `err` in the line (type, message, stack). */
  error(message: string, error?: unknown, fields?: Fields): void;
  /** The same logger for a part of the process: its name gets `/component`. */
  child(component: string): Logger;
  /** Whether a level is logged (to skip building a costly line that would be dropped). */
  enabled(level: "debug" | "info" | "warn" | "error"): boolean;
}

export interface LoggerOptions {
  /** Default ORCH_LOG_LEVEL, else info. */
  level?: string;
  /** Where lines go: a file descriptor (default 1, standard output) or a function (tests). */
  destination?: number | ((line: string) => void);
}

/** A logger for the process or library part `name`. */
export function createLogger(name: string, options: LoggerOptions = {}): Logger {
  const destination = options.destination ?? 1;
  const stream = typeof destination === "number" ? pino.destination({ dest: destination, sync: true }) : { write: destination };
  const base = pino(
    {
      name,
      level: options.level ?? process.env.ORCH_LOG_LEVEL ?? "info",
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      // `err` is already plain (errorFields): kept as it is.
      serializers: { err: (value: unknown) => value },
    },
    stream,
  );
  return wrap(base, name);
}

function wrap(p: pino.Logger, name: string): Logger {
  return {
    debug: (message, fields) => p.debug(fields ?? {}, message),
    info: (message, fields) => p.info(fields ?? {}, message),
    warn: (message, fields) => p.warn(fields ?? {}, message),
    error: (message, error, fields) => p.error(error === undefined ? (fields ?? {}) : { ...fields, err: errorFields(error) }, message),
    child: (component) => {
      const childName = `${name}/${component}`;
      return wrap(p.child({ name: childName }), childName);
    },
    enabled: (level) => p.isLevelEnabled(level),
  };
}

/** Errors whose message says it all (an API answer) go without their stack. */
const EXPECTED = new Set(["ApiError", "ExpiredError", "StatusError"]);

function errorFields(error: unknown): Fields {
  if (!(error instanceof Error)) return { message: String(error) };
  const fields: Fields = { type: error.name, message: error.message };
  if (!EXPECTED.has(error.name) && !EXPECTED.has(error.constructor.name)) fields.stack = error.stack;
  return fields;
}

/** Drops everything (tests, or callers that log elsewhere). */
export const silentLogger: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  child: () => silentLogger,
  enabled: () => false,
};

export { formatLine } from "./format.js";
