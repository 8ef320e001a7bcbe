/**
 * A count that goes up and down (requests in flight) reported as its peak over the last second, as
 * Kubernetes reports apiserver_current_inflight_requests: a scrape every 30 s would otherwise see
 * whatever happened to be running at that instant.
 */
export class PeakCount {
  private current = 0;
  private peak = 0;
  private previousPeak = 0;
  private windowStart: number;

  constructor(
    private readonly now: () => number = () => performance.now(),
    private readonly windowMs = 1000,
  ) {
    this.windowStart = now();
  }

  add(delta: number): void {
    this.roll();
    this.current += delta;
    if (this.current > this.peak) this.peak = this.current;
  }

  /** The most counted at once during the last full window and the one running now. */
  value(): number {
    this.roll();
    return Math.max(this.previousPeak, this.peak);
  }

  private roll(): void {
    const elapsed = this.now() - this.windowStart;
    if (elapsed < this.windowMs) return;
    // A window with no change at all in between peaked at the count it started (and ended) with.
    this.previousPeak = elapsed < 2 * this.windowMs ? this.peak : this.current;
    this.windowStart += Math.floor(elapsed / this.windowMs) * this.windowMs;
    this.peak = this.current;
  }
}
