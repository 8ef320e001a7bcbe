import { type AuditEvent, type AuditSink, type LogBackendOptions, openLogBackend } from "@orch/audit";
import { BroadcastChannel } from "node:worker_threads";

/** What main.ts tells each thread that serves requests (its `workerData`). */
export interface ServingThread {
  /** 0 for the first thread: it listens, writes the kubeconfigs and runs the cluster's singletons. */
  index: number;
  /** How many threads serve (ORCH_APISERVER_THREADS). */
  threads: number;
  /** The first thread's listening socket, which the others serve on too. */
  listening?: { fd: number; port: number };
}

/** One thread serving alone: tests and tools that start the apiserver in their own thread. */
export const ONLY_THREAD: ServingThread = { index: 0, threads: 1 };

/** How long a scrape waits for the other threads' figures: one still starting does not answer. */
const FIGURES_TIMEOUT_MS = 2_000;

type FiguresMessage<F> = { ask: string } | { answer: string; figures: F };

/**
 * Lets any serving thread answer a scrape for the whole process: on a channel the process's serving
 * threads share, a thread asks the others for their figures and answers their asks with its own.
 */
export class FiguresAcrossThreads<F> {
  private readonly channel: BroadcastChannel;
  private asked = 0;
  /** This thread's asks still collecting answers, by id. */
  private readonly pending = new Map<string, (figures: F) => void>();

  constructor(
    private readonly thread: ServingThread,
    dataDir: string,
    own: () => Promise<F>,
  ) {
    // A channel hears every other channel of its name in the process, never its own messages.
    this.channel = new BroadcastChannel(`orch-apiserver-figures:${dataDir}`);
    this.channel.onmessage = (event) => {
      const message = (event as { data: FiguresMessage<F> }).data;
      if ("ask" in message) void own().then((figures) => this.channel.postMessage({ answer: message.ask, figures }));
      else this.pending.get(message.answer)?.(message.figures);
    };
    // Answering keeps nothing alive: a thread ends when its server does.
    this.channel.unref();
  }

  /** The other threads' figures, as many as answer within FIGURES_TIMEOUT_MS. */
  others(): Promise<F[]> {
    const id = `${this.thread.index}:${++this.asked}`;
    return new Promise<F[]>((resolve) => {
      const answers: F[] = [];
      const done = () => {
        clearTimeout(timer);
        this.pending.delete(id);
        resolve(answers);
      };
      const timer = setTimeout(done, FIGURES_TIMEOUT_MS);
      this.pending.set(id, (figures) => {
        if (answers.push(figures) === this.thread.threads - 1) done();
      });
      this.channel.postMessage({ ask: id });
    });
  }

  close(): void {
    this.channel.close();
  }
}

/** How long the first thread, stopping, waits for the others' last audit events. */
const AUDIT_CLOSE_TIMEOUT_MS = 5_000;

type AuditMessage = { event: AuditEvent } | { closed: number };

/**
 * The audit log of a process serving from several threads. A file is written by the first thread
 * alone, which rotates and prunes it: the others hand it their events on a channel the process's
 * serving threads share (several writers would each rename the file under the others at rotation).
 * Stopping, each of the others says so after its last event, and the first closes the file once all
 * have, so that no request's events are lost at shutdown. Standard output (`-`) each thread writes itself.
 */
export async function openAuditLogAcrossThreads(thread: ServingThread, dataDir: string, options: LogBackendOptions): Promise<AuditSink> {
  if (options.path === "-" || thread.threads === 1) return openLogBackend(options);
  const channel = new BroadcastChannel(`orch-apiserver-audit:${dataDir}`);
  if (thread.index !== 0) {
    return {
      write: (event) => channel.postMessage({ event } satisfies AuditMessage),
      close: async () => {
        channel.postMessage({ closed: thread.index } satisfies AuditMessage);
        channel.close();
      },
    };
  }
  const file = await openLogBackend(options);
  const sending = new Set(Array.from({ length: thread.threads - 1 }, (_, i) => i + 1));
  let allClosed!: () => void;
  const closed = new Promise<void>((resolve) => (allClosed = resolve));
  channel.onmessage = (message) => {
    const data = (message as { data: AuditMessage }).data;
    if ("event" in data) file.write(data.event);
    else if (sending.delete(data.closed) && sending.size === 0) allClosed();
  };
  // Listening keeps nothing alive; stopping waits for the others explicitly.
  channel.unref();
  return {
    write: (event) => file.write(event),
    close: async () => {
      let timer: NodeJS.Timeout | undefined;
      // A thread that died or never started its auditor says nothing: wait for it a while only.
      await Promise.race([closed, new Promise((resolve) => (timer = setTimeout(resolve, AUDIT_CLOSE_TIMEOUT_MS)))]);
      clearTimeout(timer);
      channel.close();
      await file.close();
    },
  };
}
