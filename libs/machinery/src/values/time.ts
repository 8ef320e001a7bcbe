/** The text of the current second, made once per second: every write stamps the time once or twice. */
let currentSecond = Number.NaN;
let currentText = "";

/** Kubernetes `Time`: RFC 3339 in UTC with second precision (the current time without an argument). */
export function rfc3339(d?: Date): string {
  if (d) return `${d.toISOString().slice(0, 19)}Z`;
  const second = Math.floor(Date.now() / 1000);
  if (second !== currentSecond) {
    currentSecond = second;
    currentText = `${new Date(second * 1000).toISOString().slice(0, 19)}Z`;
  }
  return currentText;
}

/** Kubernetes `MicroTime`: RFC 3339 with microseconds. */
export const rfc3339Micro = (d: Date = new Date()): string => `${d.toISOString().slice(0, 23)}000Z`;
