// Reading the lines the orch processes log, without pino: the launcher formats its children's output
// with this alone (`@orch/log/format`), and does not load the logger before it has started them.

/** A log line as the launcher prints it: `level name: msg key=value…` (other lines come back as they are). */
export function formatLine(line: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  if (typeof entry !== "object" || entry === null || typeof entry.msg !== "string") return line;
  const { level, time: _time, name, msg, err, ...fields } = entry;
  const extra = Object.entries(fields).map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`);
  const error =
    err && typeof err === "object"
      ? `: ${(err as { stack?: string; message?: string }).stack ?? (err as { message?: string }).message}`
      : "";
  const prefix = level === "info" ? "" : `${String(level).toUpperCase()} `;
  return `${prefix}${name ? `${String(name)}: ` : ""}${msg}${extra.length > 0 ? ` ${extra.join(" ")}` : ""}${error}`;
}
