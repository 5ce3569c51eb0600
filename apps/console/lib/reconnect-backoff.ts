/**
 * How long LiveRefresh waits before trying its stream again. A lost stream
 * can be reported twice (its "fallback" event, then the error of the
 * connection closing), and each stream's loss moves the backoff one step only:
 * counting both skipped a step (3 s then 30 s, not 10 s).
 */

/** The waits, in order (the last one repeats): a gateway back after a restart is found live again soon, a long outage is not hammered. */
export const RECONNECT_MS = [3_000, 10_000, 30_000, 60_000] as const;

export class ReconnectBackoff<Stream extends object> {
  private failures = 0;
  private readonly counted = new WeakSet<Stream>();

  /** The wait before the next try after `stream` was lost; null when its loss was already counted. */
  lost(stream: Stream): number | null {
    if (this.counted.has(stream)) return null;
    this.counted.add(stream);
    const wait = RECONNECT_MS[Math.min(this.failures, RECONNECT_MS.length - 1)]!;
    this.failures += 1;
    return wait;
  }

  /** A stream went live: the next loss starts from the first wait again. */
  live(): void {
    this.failures = 0;
  }
}
