// Events over HTTP watch, for callers without NATS: list, then watch from the list's revision; every
// event and bookmark moves the start of the next watch forward, so a watch that ends (server timeout,
// dropped connection) resumes where it stopped; 410 Expired means that revision left the server's
// history: list again (client-go's reflector).
import type { ApiClient } from "../client.js";
import { isExpired } from "../errors.js";
import { type KubeObject, revisionOf } from "../types.js";
import type { EventSource, InformerOptions, InformerSink } from "./source.js";

export class HttpWatchSource<T extends KubeObject> implements EventSource<T> {
  constructor(
    private readonly client: ApiClient,
    private readonly options: InformerOptions,
  ) {}

  async run(sink: InformerSink<T>): Promise<void> {
    const { signal } = sink;
    let revision = await sink.relist();
    let failures = 0;
    while (!signal.aborted) {
      const stream = this.client.watch<T>(this.options.ref, {
        namespace: this.options.namespace,
        labelSelector: this.options.labelSelector,
        fieldSelector: this.options.fieldSelector,
        resourceVersion: String(revision),
        allowWatchBookmarks: true,
        // Spread over 5-10 minutes so a fleet of informers does not reconnect at once.
        timeoutSeconds: Math.round(300 + Math.random() * 300),
      });
      const close = () => stream.close();
      signal.addEventListener("abort", close);
      const began = Date.now();
      let events = 0;
      try {
        for await (const event of stream) {
          failures = 0;
          events++;
          const at = revisionOf(event.object);
          if (event.type === "BOOKMARK") {
            if (at > revision) revision = at;
            sink.progress(at);
            continue;
          }
          // The server sends only revisions after the start; this guard keeps a resumed watch exact anyway.
          if (at <= revision) continue;
          await sink.apply(event.type, event.object, at);
          revision = at;
        }
        // A watch the server ends at once, again and again, must not become a busy loop.
        if (events === 0 && Date.now() - began < 1000) await sink.backoff(failures++);
      } catch (e) {
        if (signal.aborted) break;
        if (isExpired(e)) {
          revision = await sink.relist();
          continue;
        }
        sink.error(e);
        await sink.backoff(failures++);
      } finally {
        signal.removeEventListener("abort", close);
      }
    }
  }
}
