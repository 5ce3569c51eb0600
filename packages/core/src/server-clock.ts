/**
 * Where the database's clock stands against this process's, as far as the
 * answers to start statements tell: enough to start a task taken ahead of its
 * runAt at that instant, never before (the SDK Worker's leases, the PUSH
 * worker's starts).
 *
 * A start's `startInMs` is counted at the statement. Waiting that long from
 * when the answer arrived starts the task late by the answer's way back (for a
 * lease: serialisation, HTTP, parsing, milliseconds, more for a large batch on
 * a busy machine; for the PUSH worker: whatever its event loop did first). Each
 * answer also bounds the offset between the clocks from below: the database's
 * clock read `runAt − startInMs` or later before the answer left, and the
 * answer arrived at `receivedAt`. The largest bound seen is the one whose way
 * back was shortest, so holding until runAt on it is late by only that
 * shortest way back, and still never early.
 *
 * Local instants are monotonic (`performance.now()`), so a step of this
 * machine's wall clock changes nothing. Clocks also run at slightly different
 * rates, so a bound loses DRIFT_PER_MS of its value per ms of age: far more than
 * any NTP-disciplined clock drifts, and a fresh answer replaces it at once.
 */

/** 100 ppm, the tolerance of an undisciplined quartz clock. */
const DRIFT_PER_MS = 1e-4;

export class ServerClock {
  /** Lower bound of (server epoch ms − local monotonic ms), and the local instant it was learnt. */
  #offset = Number.NEGATIVE_INFINITY;
  #learntAt = 0;

  /**
   * A start statement answered `startInMs` for a task due at `runAt` (server
   * epoch ms), and the answer arrived at the local instant `receivedAt`. The
   * statement rounds startInMs up (0 once due), so the server's clock had read
   * `runAt − startInMs` or later by then.
   */
  observe(runAt: number, startInMs: number, receivedAt = performance.now()): void {
    const offset = runAt - startInMs - receivedAt;
    if (offset > this.#offsetAt(receivedAt)) {
      this.#offset = offset;
      this.#learntAt = receivedAt;
    }
  }

  /** Milliseconds from `now` until the server's clock reaches `serverTime` at the latest (0 if it has; Infinity before any observation). */
  msUntil(serverTime: number, now = performance.now()): number {
    return Math.max(0, serverTime - this.#offsetAt(now) - now);
  }

  /**
   * Resolves true once the server's clock has reached `serverTime`, false when
   * `sleep` (the caller's timer, which may heed an abort) says it was cut short.
   * Checked again after each sleep: a timer armed late in a long turn of the
   * event loop counts from the turn's start and can fire that much early.
   */
  async waitUntil(serverTime: number, sleep: (ms: number) => Promise<boolean>): Promise<boolean> {
    for (let left = this.msUntil(serverTime); left > 0; left = this.msUntil(serverTime)) {
      if (!(await sleep(Math.ceil(left)))) return false;
    }
    return true;
  }

  #offsetAt(now: number): number {
    return this.#offset - Math.abs(now - this.#learntAt) * DRIFT_PER_MS;
  }
}
