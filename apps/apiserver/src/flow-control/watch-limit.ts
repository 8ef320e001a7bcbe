// How many watches are open, per user and in all. Kubernetes bounds watches only by the seat each takes
// until its stream starts; an open watch still holds memory (its queue of events, up to 10,000) and a
// connection, so orch bounds how many one user, and everybody, may hold.

export interface WatchLimits {
  /** Open watches in all (exempt users' included). */
  total: number;
  /** Open watches of one user. */
  perUser: number;
}

export class WatchCounter {
  private open = 0;
  private readonly byUser = new Map<string, number>();

  constructor(private readonly limits: WatchLimits) {}

  /**
   * Counts a new watch of `user` and returns the function that uncounts it (call once, when the watch
   * ends); undefined when a limit is reached. An exempt user is counted but never refused.
   */
  tryOpen(user: string, exempt = false): (() => void) | undefined {
    const mine = this.byUser.get(user) ?? 0;
    if (!exempt && (this.open >= this.limits.total || mine >= this.limits.perUser)) return undefined;
    this.open++;
    this.byUser.set(user, mine + 1);
    let closed = false;
    return () => {
      if (closed) return;
      closed = true;
      this.open--;
      const left = (this.byUser.get(user) ?? 1) - 1;
      if (left === 0) this.byUser.delete(user);
      else this.byUser.set(user, left);
    };
  }

  count(user?: string): number {
    return user === undefined ? this.open : (this.byUser.get(user) ?? 0);
  }
}
