import { completeAttemptWithoutResult, completeAttemptsQuietly, isStoreUnavailable, type Completion, type Database, type DispatchIntent } from "@tasklane/db";
import { refusedForValue } from "@tasklane/db/pg-text";
import { MAX_HELD_OUTCOMES, outcomeRetryDelayMs } from "./outcome-retry.js";

interface Pending {
  item: Completion;
  /** performance.now() past which the attempt's lease is over (leaseEndsAt). */
  leaseEndsAt: number;
  resolve: (accepted: boolean) => void;
  reject: (e: unknown) => void;
}

/** A throttled failure log (createFailureLog in @tasklane/config). */
export interface RepeatingFailureLog {
  failed(error: unknown): void;
  succeeded(): void;
}

const quiet: RepeatingFailureLog = { failed: () => undefined, succeeded: () => undefined };

export interface HoldOptions {
  /**
   * Outcomes held for Postgres at most; past it the newest are dropped.
   * @defaultValue MAX_HELD_OUTCOMES (20,000)
   */
  maxHeld?: number;
  /** Recording failed because Postgres could not be reached, and recovered. */
  unavailableLog?: RepeatingFailureLog;
  /** Held outcomes dropped (lease over, cap reached, worker stopping), each an OutcomeNotRecorded. */
  droppedLog?: RepeatingFailureLog;
  /** @defaultValue performance.now */
  now?: () => number;
  /** @defaultValue Math.random */
  random?: () => number;
}

/**
 * An outcome given up on without being recorded; the batcher has logged why
 * (throttled), so callers need not log each one. Its task's lease runs out and
 * the lease-expiry path runs it again.
 */
export class OutcomeNotRecorded extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "OutcomeNotRecorded";
  }
}

/**
 * Groups successful outcomes into one UPDATE: a completion statement has a
 * fixed cost of about 3 ms (round trip, commit flush, planning), so one for
 * 50 attempts costs about what one costs alone. A batch is flushed when full
 * or `maxDelayMs` after its first outcome. The delay is 10 ms, not 2: PUSH
 * responses return in bursts a few ms apart, and at ~1,300 tasks/s a 2 ms
 * window closed at 27 rows per statement, a 10 ms one at 49, which cut the
 * statement's Postgres time per task by a quarter (pg_stat_statements,
 * alternating s1 runs). The cost: an outcome is recorded, and its slot
 * freed, up to 10 ms later.
 *
 * One statement for many tenants' outcomes fails for all of them when one
 * value cannot be stored, and every task of the batch would then run again
 * after its lease: a failed batch is recorded again one item at a time, and
 * an item the database refuses for its value is recorded without its result.
 *
 * A statement that failed because Postgres could not be reached (a restart, a
 * cut connection: isStoreUnavailable) changed nothing, and the outcome is still
 * good while its lease lasts: it is held and recorded again, in batches of
 * `maxBatch`, after a capped, jittered backoff (outcome-retry.ts), until
 * recorded or its lease is over (then the lease-expiry path owns the task, and
 * a record would be refused as stale anyway). Dropping it instead ran a
 * task whose endpoint had answered a second time, ~5 minutes later, after a
 * 15 s Postgres cut (QA t6). Only the backoff's one timer exists while
 * something is held; the path where Postgres answers is unchanged.
 */
export class CompletionBatcher {
  private pending: Pending[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** Waiting for Postgres, oldest first. */
  private held: Pending[] = [];
  /** Taken out of `held` by the retry round in progress. */
  private retryingCount = 0;
  private retrying = false;
  private retryTimer: NodeJS.Timeout | undefined;
  /** Failed retry rounds since a statement last went through. */
  private round = 0;
  private unavailable = false;
  private readonly maxHeld: number;
  private readonly unavailableLog: RepeatingFailureLog;
  private readonly droppedLog: RepeatingFailureLog;
  private readonly now: () => number;
  private readonly random: () => number;

  constructor(
    private readonly db: Database,
    private readonly actor: string,
    /**
     * Receives the next tasks of ordering keys that these completions released. Their outbox rows
     * deliver them should this fail, so a failure here never fails an outcome already recorded.
     */
    private readonly onReleased: (intents: DispatchIntent[]) => Promise<void>,
    private readonly horizonMs: number,
    private readonly maxBatch = 100,
    private readonly maxDelayMs = 10,
    hold: HoldOptions = {},
  ) {
    this.maxHeld = hold.maxHeld ?? MAX_HELD_OUTCOMES;
    this.unavailableLog = hold.unavailableLog ?? quiet;
    this.droppedLog = hold.droppedLog ?? quiet;
    this.now = hold.now ?? (() => performance.now());
    this.random = hold.random ?? Math.random;
  }

  /** Single statements waiting in whileLeaseLasts. */
  private waitingSingles = 0;
  private readonly wakers = new Set<() => void>();
  /** Set by drain(): past it, nothing waits for Postgres any more. */
  private giveUpAt = Number.POSITIVE_INFINITY;

  /** Outcomes waiting for Postgres to answer again. */
  get heldCount(): number {
    return this.held.length + this.retryingCount + this.waitingSingles;
  }

  /**
   * Runs `record`, one attempt's statement outside the batches (a failure, a
   * success without its result, a hand-back), and while it fails because
   * Postgres cannot be reached, runs it again after the same backoff as held
   * batches, sooner when another statement goes through, until `leaseEndsAt`
   * (then rejects with OutcomeNotRecorded). Counted with the held outcomes for
   * the cap and the drain. Any other error is thrown as it is.
   */
  async whileLeaseLasts<T>(taskId: string, leaseEndsAt: number, record: () => Promise<T>): Promise<T> {
    for (let round = 0; ; round++) {
      let error: unknown;
      try {
        const recorded = await record();
        if (this.unavailable) this.answeredAgain();
        return recorded;
      } catch (e) {
        if (!isStoreUnavailable(e)) throw e;
        error = e;
      }
      this.unavailable = true;
      this.unavailableLog.failed(error);
      const now = this.now();
      const wait = outcomeRetryDelayMs(round, this.random());
      const why =
        now >= leaseEndsAt
          ? "its lease ran out while Postgres could not be reached"
          : now >= this.giveUpAt
            ? "the worker stopped before Postgres answered again"
            : this.heldCount >= this.maxHeld
              ? `${this.maxHeld} outcomes are already held while Postgres cannot be reached`
              : undefined;
      if (why !== undefined) throw this.dropped(taskId, why, error);
      this.waitingSingles++;
      try {
        await new Promise<void>((resolve) => {
          const done = () => {
            clearTimeout(timer);
            this.wakers.delete(done);
            resolve();
          };
          const timer = setTimeout(done, Math.min(wait, Math.max(0, leaseEndsAt - now)));
          this.wakers.add(done);
        });
      } finally {
        this.waitingSingles--;
      }
    }
  }

  /**
   * Resolves true when recorded, false when refused (the lease moved on).
   * `leaseEndsAt` (performance.now() time, see leaseEndsAt in outcome-retry.ts):
   * how long the outcome is worth recording again if Postgres cannot be
   * reached; rejects with OutcomeNotRecorded once it is not.
   */
  complete(item: Completion, leaseEndsAt: number): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.pending.push({ item, leaseEndsAt, resolve, reject });
      if (this.pending.length >= this.maxBatch) void this.flush();
      else this.timer ??= setTimeout(() => void this.flush(), this.maxDelayMs);
    });
  }

  /**
   * Records a success whose answer is not kept (result null), `note` saying
   * why; not batched: these are rare. Resolves like complete().
   */
  async completeWithoutResult(item: Omit<Completion, "result">, note: string): Promise<boolean> {
    const { refused, dispatch } = await completeAttemptWithoutResult(this.db, item, note, this.actor, this.horizonMs);
    await this.release(dispatch);
    return refused.length === 0;
  }

  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return;
    await this.record(batch);
  }

  /**
   * Shutdown: flushes what is pending and goes on recording held outcomes
   * until none is left or `deadline` (performance.now() time) passes; what is
   * still held then is dropped (its lease runs out).
   */
  async drain(deadline: number): Promise<void> {
    this.giveUpAt = deadline;
    await this.flush();
    while (this.heldCount > 0 && this.now() < deadline) {
      // The backoff's timer goes on meanwhile; a round already waiting past the deadline is brought forward to it.
      await new Promise((r) => setTimeout(r, Math.max(1, Math.min(50, deadline - this.now()))));
    }
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    const left = this.held;
    this.held = [];
    for (const p of left) this.drop(p, "the worker stopped before Postgres answered again");
    for (const wake of [...this.wakers]) wake();
  }

  private async record(batch: Pending[]): Promise<void> {
    let recorded: { refused: string[]; dispatch: DispatchIntent[] };
    try {
      recorded = await completeAttemptsQuietly(this.db, batch.map((b) => b.item), this.actor, this.horizonMs);
    } catch (error) {
      if (isStoreUnavailable(error)) return this.hold(batch, error);
      await (batch.length === 1 ? this.recordRefused(batch[0]!, error) : this.recordOneByOne(batch));
      return;
    }
    this.settle(batch, recorded.refused);
    if (this.unavailable) this.answeredAgain();
    await this.release(recorded.dispatch);
  }

  private settle(batch: Pending[], refused: string[]): void {
    const refusedSet = new Set(refused);
    for (const b of batch) b.resolve(!refusedSet.has(b.item.taskId));
  }

  private release(dispatch: DispatchIntent[]): Promise<void> {
    return this.onReleased(dispatch).catch(() => undefined);
  }

  /**
   * A failed batch, again one statement per item: bounded by the batch size,
   * and cut short by the first failure not caused by a value: Postgres gone
   * holds what is left for a retry round, anything else rejects it.
   */
  private async recordOneByOne(batch: Pending[]): Promise<void> {
    for (const [i, b] of batch.entries()) {
      try {
        const { refused, dispatch } = await completeAttemptsQuietly(this.db, [b.item], this.actor, this.horizonMs);
        b.resolve(refused.length === 0);
        await this.release(dispatch);
      } catch (error) {
        if (isStoreUnavailable(error)) return this.hold(batch.slice(i), error);
        if (!refusedForValue(error)) {
          for (const rest of batch.slice(i)) rest.reject(error);
          return;
        }
        await this.recordRefused(b, error);
      }
    }
  }

  /** One item whose statement failed: without its result if the database refused the value, held if it could not be reached, else rejected. */
  private async recordRefused(b: Pending, error: unknown): Promise<void> {
    if (isStoreUnavailable(error)) return this.hold([b], error);
    if (!refusedForValue(error)) return b.reject(error);
    const reason = error instanceof Error ? error.message : String(error);
    try {
      b.resolve(await this.completeWithoutResult(b.item, `Result not kept: the database refused it (${reason})`));
    } catch (again) {
      if (isStoreUnavailable(again)) this.hold([b], again);
      else b.reject(again);
    }
  }

  /** Postgres could not be reached for these: kept for a retry round while their leases last and there is room. */
  private hold(items: Pending[], error: unknown): void {
    this.unavailable = true;
    this.unavailableLog.failed(error);
    const now = this.now();
    for (const p of items) {
      if (now >= p.leaseEndsAt) this.drop(p, "its lease ran out while Postgres could not be reached", error);
      else if (this.heldCount >= this.maxHeld) this.drop(p, `${this.maxHeld} outcomes are already held while Postgres cannot be reached`, error);
      else this.held.push(p);
    }
    this.scheduleRetry();
  }

  private drop(p: Pending, why: string, cause?: unknown): void {
    p.reject(this.dropped(p.item.taskId, why, cause));
  }

  private dropped(taskId: string, why: string, cause?: unknown): OutcomeNotRecorded {
    const error = new OutcomeNotRecorded(`outcome of task ${taskId} dropped: ${why}; its lease runs out and it runs again`, cause === undefined ? undefined : { cause });
    this.droppedLog.failed(error);
    return error;
  }

  private scheduleRetry(): void {
    if (this.retryTimer !== undefined || this.retrying || this.held.length === 0) return;
    const delay = outcomeRetryDelayMs(this.round++, this.random());
    this.retryTimer = setTimeout(() => void this.retryHeld(), delay);
  }

  /** A statement went through: Postgres answers again, so what is held goes now rather than after its backoff. */
  private answeredAgain(): void {
    this.unavailable = false;
    this.round = 0;
    this.unavailableLog.succeeded();
    this.droppedLog.succeeded();
    for (const wake of [...this.wakers]) wake();
    if (this.held.length === 0 || this.retrying) return;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    void this.retryHeld();
  }

  /**
   * One retry round: what is held, in batches of `maxBatch`, those whose lease
   * is over dropped first. The first batch Postgres still cannot take goes back,
   * with the rest, for the next round after a longer wait.
   */
  private async retryHeld(): Promise<void> {
    this.retryTimer = undefined;
    if (this.retrying) return;
    this.retrying = true;
    const round = this.held;
    this.held = [];
    this.retryingCount = round.length;
    try {
      for (let at = 0; at < round.length; ) {
        const now = this.now();
        const batch: Pending[] = [];
        for (; at < round.length && batch.length < this.maxBatch; at++) {
          const p = round[at]!;
          this.retryingCount--;
          if (now >= p.leaseEndsAt) this.drop(p, "its lease ran out while Postgres could not be reached");
          else batch.push(p);
        }
        if (batch.length === 0) continue;
        let recorded: { refused: string[]; dispatch: DispatchIntent[] };
        try {
          recorded = await completeAttemptsQuietly(this.db, batch.map((b) => b.item), this.actor, this.horizonMs);
        } catch (error) {
          if (isStoreUnavailable(error)) {
            this.retryingCount = 0;
            // Back in front of anything held meanwhile: oldest first.
            this.held = [...batch, ...round.slice(at), ...this.held];
            this.unavailableLog.failed(error);
            return;
          }
          await (batch.length === 1 ? this.recordRefused(batch[0]!, error) : this.recordOneByOne(batch));
          continue;
        }
        this.settle(batch, recorded.refused);
        if (this.unavailable) {
          this.unavailable = false;
          this.round = 0;
          this.unavailableLog.succeeded();
          this.droppedLog.succeeded();
          for (const wake of [...this.wakers]) wake();
        }
        await this.release(recorded.dispatch);
      }
    } finally {
      this.retryingCount = 0;
      this.retrying = false;
      this.scheduleRetry();
    }
  }
}
