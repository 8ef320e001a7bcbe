// Event-driven assertions: a recorder of a control plane's change events (from the bus, or from the
// HTTP watch when there is none), and waits for one event or an ordered sequence of them that fail
// with what was seen instead.
import { natsConnectOptions } from "@orch/bus-access";
import { EVENTS_PREFIX, EVENTS_STREAM, parseEventSubject } from "@orch/events";
import { request } from "node:https";
import { AckPolicy, DeliverPolicy, connect, nuid } from "nats";

export interface RecordedEvent {
  type: "ADDED" | "MODIFIED" | "DELETED";
  /** The API group (`""` for the core group), the plural resource, the namespace (`""` when cluster-scoped), the name. */
  group: string;
  resource: string;
  namespace: string;
  name: string;
  /** The revision of the change (the object's resourceVersion after it). */
  revision: number;
  /** The object as the event carries it: whole, or its identity only for Secrets (read those through the API). */
  object: Record<string, any>;
}

export interface RecorderOptions {
  /** Without a bus: the resources to watch over HTTP (`{ group: "apps", version: "v1", resource: "deployments" }`). */
  resources?: { group: string; version: string; resource: string }[];
}

export interface WaitOptions {
  /** Default 10 s. */
  timeoutMs?: number;
}

/** One step of `waitForSequence`: what it is, for the failure message, and which event it is. */
export interface Step {
  description: string;
  matches: (event: RecordedEvent) => boolean;
}

/** Starts delivering events to `emit`; resolves to a function that stops it. */
export type EventSource = (emit: (event: RecordedEvent) => void) => Promise<() => Promise<void>>;

export class EventRecorder {
  /** Every event recorded so far, in the order they arrived. */
  readonly events: RecordedEvent[] = [];
  private readonly listeners = new Set<() => void>();
  private close: () => Promise<void> = async () => undefined;

  static async start(source: EventSource, _options: RecorderOptions = {}): Promise<EventRecorder> {
    const recorder = new EventRecorder();
    recorder.close = await source((event) => {
      recorder.events.push(event);
      for (const listener of recorder.listeners) listener();
    });
    return recorder;
  }

  /** The first recorded event (already recorded, or to come) that `matches`. */
  async waitFor(description: string, matches: (event: RecordedEvent) => boolean, options: WaitOptions = {}): Promise<RecordedEvent> {
    const [event] = await this.waitForSequence([{ description, matches }], options);
    return event!;
  }

  /** Events matching each step in turn, each after the one before; fails naming the step not reached. */
  waitForSequence(steps: Step[], options: WaitOptions = {}): Promise<RecordedEvent[]> {
    const timeoutMs = options.timeoutMs ?? 10_000;
    return new Promise((resolve, reject) => {
      const found: RecordedEvent[] = [];
      let next = 0;
      const check = () => {
        while (found.length < steps.length && next < this.events.length) {
          const event = this.events[next++]!;
          if (steps[found.length]!.matches(event)) found.push(event);
        }
        if (found.length === steps.length) finish();
      };
      const timer = setTimeout(() => {
        const missing = steps[found.length]!;
        const reached = found.length
          ? ` after ${steps
              .slice(0, found.length)
              .map((s) => s.description)
              .join(", then ")}`
          : "";
        finish(new Error(`timed out after ${timeoutMs} ms waiting for ${missing.description}${reached}; ${this.describe()}`));
      }, timeoutMs);
      const finish = (error?: Error) => {
        clearTimeout(timer);
        this.listeners.delete(check);
        if (error) reject(error);
        else resolve(found);
      };
      this.listeners.add(check);
      check();
    });
  }

  /** What was recorded, briefly: the readable part of a failure. */
  describe(last = 20): string {
    const shown = this.events.slice(-last).map((e) => `  ${summary(e)}`);
    const more = this.events.length > last ? ` (the last ${last})` : "";
    return `recorded ${this.events.length} events${more}${shown.length ? `:\n${shown.join("\n")}` : ""}`;
  }

  async stop(): Promise<void> {
    await this.close();
  }
}

/** A step for `waitForSequence`. */
export const step = (description: string, matches: (event: RecordedEvent) => boolean): Step => ({ description, matches });

function summary(e: RecordedEvent): string {
  const conditions = (e.object.status?.conditions as { type: string; status: string }[] | undefined)
    ?.map((c) => `${c.type}=${c.status}`)
    .join(",");
  const where = e.namespace ? `${e.namespace}/${e.name}` : e.name;
  return `${e.type} ${e.group ? `${e.resource}.${e.group}` : e.resource} ${where} @${e.revision}${conditions ? ` [${conditions}]` : ""}`;
}

/** Every change event on the control plane's bus from now on, read as the admin. */
export function natsSource(bus: { servers: string; caFile: string; certFile: string; keyFile: string }): EventSource {
  return async (emit) => {
    const nc = await connect(natsConnectOptions(bus, "orch-event-recorder"));
    const jsm = await nc.jetstreamManager({ checkAPI: false });
    const name = nuid.next();
    await jsm.consumers.add(EVENTS_STREAM, {
      name,
      filter_subject: `${EVENTS_PREFIX}.>`,
      deliver_policy: DeliverPolicy.New,
      ack_policy: AckPolicy.None,
      mem_storage: true,
    });
    const messages = await (await nc.jetstream().consumers.get(EVENTS_STREAM, name)).consume();
    const reading = (async () => {
      for await (const m of messages) {
        const where = parseEventSubject(m.subject);
        if (!where) continue;
        const envelope = m.json<{ type: RecordedEvent["type"]; revision: number; object: RecordedEvent["object"] }>();
        emit({ type: envelope.type, ...where, revision: envelope.revision, object: envelope.object });
      }
    })();
    return async () => {
      await messages.close();
      await reading.catch(() => undefined);
      await jsm.consumers.delete(EVENTS_STREAM, name).catch(() => undefined);
      await nc.close();
    };
  };
}

/** Without a bus: the HTTP watch of each resource, from the current revision on. */
export function httpWatchSource(
  server: string,
  tls: { ca: Buffer; cert: Buffer; key: Buffer },
  resources: { group: string; version: string; resource: string }[],
): EventSource {
  return async (emit) => {
    if (resources.length === 0) throw new Error("recordEvents: without a bus, name the resources to watch (options.resources)");
    const closers = await Promise.all(
      resources.map(async ({ group, version, resource }) => {
        const base = group ? `/apis/${group}/${version}/${resource}` : `/api/${version}/${resource}`;
        const list = JSON.parse(await get(server, tls, `${base}?limit=1`)) as { metadata: { resourceVersion: string } };
        const req = request(new URL(`${base}?watch=true&resourceVersion=${list.metadata.resourceVersion}`, server), { ...tls });
        req.on("response", (res) => {
          let buffer = "";
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => {
            buffer += chunk;
            let newline = buffer.indexOf("\n");
            while (newline >= 0) {
              const line = buffer.slice(0, newline);
              buffer = buffer.slice(newline + 1);
              newline = buffer.indexOf("\n");
              if (!line.trim()) continue;
              const event = JSON.parse(line) as { type: string; object: RecordedEvent["object"] };
              if (event.type !== "ADDED" && event.type !== "MODIFIED" && event.type !== "DELETED") continue;
              const { name = "", namespace = "", resourceVersion = "0" } = event.object.metadata ?? {};
              emit({ type: event.type, group, resource, namespace, name, revision: Number(resourceVersion), object: event.object });
            }
          });
        });
        req.on("error", () => undefined);
        req.end();
        return async () => void req.destroy();
      }),
    );
    return async () => {
      for (const close of closers) await close();
    };
  };
}

function get(server: string, tls: { ca: Buffer; cert: Buffer; key: Buffer }, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    request(new URL(path, server), { ...tls }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.on("end", () => (res.statusCode === 200 ? resolve(text) : reject(new Error(`GET ${path}: ${res.statusCode} ${text}`))));
    })
      .on("error", reject)
      .end();
  });
}
