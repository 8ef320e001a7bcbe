// watch: JSON lines from the store's watcher, written straight to the connection until the timeout, the
// client leaving, or an error.
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import { errors, parseFieldSelector } from "@orch/machinery";
import { type ResourceStore, type WatchEvent, apiVersionOf } from "@orch/registry";
import { objectTable } from "../table.js";
import { listOptions } from "./options.js";
import type { VerbHandler } from "./request.js";

const encoder = new TextEncoder();
/** The last line encoded: every watcher of a resource sends the same line for a change, so encode it once. */
let lastLine: { type: string; object: string; bytes: Uint8Array } | undefined;

function encodeLine(type: string, object: string): Uint8Array {
  if (lastLine && lastLine.object === object && lastLine.type === type) return lastLine.bytes;
  const bytes = encoder.encode(`{"type":"${type}","object":${object}}\n`);
  lastLine = { type, object, bytes };
  return bytes;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

/**
 * A watch of one named object (the `/watch/` prefix) is a watch of `metadata.name=<name>`; a field
 * selector of its own may only say the same, as in Kubernetes' ListResource.
 */
function nameSelector(name: string, fieldSelector: string | undefined): string | undefined {
  if (!name) return fieldSelector;
  if (!fieldSelector) return `metadata.name=${name}`;
  let selected: string | undefined;
  try {
    const requirements = parseFieldSelector(fieldSelector).requirements;
    const exact = requirements.find((r) => r.field === "metadata.name" && r.operator === "=");
    selected = exact?.value;
  } catch {
    selected = undefined;
  }
  if (selected !== name) throw errors.badRequest("fieldSelector metadata.name doesn't match requested name");
  return fieldSelector;
}

/** Streams watch events as JSON lines until the timeout, the client leaving, or an error. */
export const watch: VerbHandler = async ({ deps, req, kind, store, format }) => {
  const { timeoutSeconds, ...listed } = listOptions(req);
  const options = { ...listed, limit: undefined, fieldSelector: nameSelector(req.info.name, listed.fieldSelector) };
  const bookmarks = options.allowWatchBookmarks === true;
  const line = (type: string, object: unknown) => encodeLine(type, typeof object === "string" ? object : JSON.stringify(object));
  let watcher: Awaited<ReturnType<ResourceStore["watch"]>>;
  try {
    watcher = await store.watch(options, deps.initialEventsAnnotation);
  } catch (e) {
    // An expired start revision is reported inside a 200 stream, as Kubernetes does.
    const status = (e as { status?: { code?: number } }).status;
    if (status?.code === 410) {
      return new Response(line("ERROR", status), { status: 200, headers: { "Content-Type": "application/json" } });
    }
    throw e;
  }
  const render = (event: WatchEvent): string =>
    format.as === "Table" && event.type !== "BOOKMARK" && event.type !== "ERROR"
      ? objectTable(kind, event.object, format.includeObject)
      : event.object;
  // As Kubernetes: no timeout (or 0) is a random 30 to 60 minutes; a negative one ends the watch at once.
  const timeoutMs = timeoutSeconds ? Math.max(0, timeoutSeconds) * 1000 : 1800 * (1 + Math.random()) * 1000;
  let lastRevision = 0;
  const timer = setTimeout(() => watcher.close(), timeoutMs);
  // Periodic bookmarks tell the client how far the stream has progressed even without changes.
  const ticker = setInterval(() => {
    if (!bookmarks) return;
    const revision = Math.max(lastRevision, store.currentRevision());
    watcher.push({
      type: "BOOKMARK",
      revision,
      object: JSON.stringify({ kind: kind.kind, apiVersion: apiVersionOf(kind), metadata: { resourceVersion: String(revision) } }),
    });
  }, 60_000);
  const stream = req.openStream(200, { "Content-Type": "application/json", "Cache-Control": "no-cache" });
  let draining = false;
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    clearTimeout(timer);
    clearInterval(ticker);
    watcher.close();
    if (watcher.endReason) stream.write(line("ERROR", errors.gone(`watch closed: ${watcher.endReason}`).status));
    stream.end();
  };
  // Writes what is queued, in one chunk; while the socket is full, events wait in the watcher's queue
  // (bounded: a watcher too far behind is closed) and leave together when it drains.
  const flush = () => {
    if (ended || draining) return;
    const lines: Uint8Array[] = [];
    for (const event of watcher.takeQueued()) {
      if (event.type === "BOOKMARK" && !bookmarks) continue;
      lastRevision = Math.max(lastRevision, event.revision);
      lines.push(line(event.type, render(event)));
    }
    if (lines.length > 0 && !stream.write(lines.length === 1 ? lines[0]! : concat(lines))) {
      draining = true;
      stream.onDrain(() => {
        draining = false;
        flush();
      });
    }
    if (watcher.isClosed && !draining) end();
  };
  req.onClose(() => {
    ended = true;
    clearTimeout(timer);
    clearInterval(ticker);
    watcher.close();
  });
  watcher.onQueued(flush);
  flush();
  // The response is on the connection already; this tells @hono/node-server to leave it alone.
  return RESPONSE_ALREADY_SENT;
};
