// How an engine hands committed changes to its commit listeners when several writers share one
// database (PostgreSQL replicas; apiserver threads on one SQLite file): in revision order, each once,
// whichever writer committed it. Both engines use this one class.
import type { Logger } from "@orch/log";
import type { Change } from "./storage.js";

export class CommitDelivery {
  private readonly listeners = new Set<(change: Change) => void>();

  /**
   * @param delivered the newest revision committed before this writer opened the database: its
   *   listeners hear what comes after it.
   * @param onGap called when a change arrives past a revision not yet handed over: the engine reads
   *   the log again from `delivered` (revisions commit in order, so a gap is never expected).
   */
  constructor(
    private delivered: number,
    private readonly log: Logger,
    private readonly onGap: () => void,
  ) {}

  /** The newest revision handed to the listeners: every revision up to it has been, once and in order. */
  get revision(): number {
    return this.delivered;
  }

  add(listener: (change: Change) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Hands changes over in revision order: what was handed over already is skipped, nothing past a gap. */
  deliver(changes: readonly Change[]): void {
    for (const change of changes) {
      if (change.revision <= this.delivered) continue;
      if (change.revision !== this.delivered + 1) {
        this.onGap();
        return;
      }
      this.delivered = change.revision;
      for (const listener of this.listeners) {
        // The change is committed: a failing listener must neither fail it nor starve the others.
        try {
          listener(change);
        } catch (e) {
          this.log.error("onCommit listener failed", e);
        }
      }
    }
  }

  /**
   * Gives up on revisions up to `revision` that can no longer be read (compacted before this writer
   * read them): its watchers get a 410 when they resume from one of them.
   */
  skipTo(revision: number): void {
    this.delivered = Math.max(this.delivered, revision);
  }
}
