import { completeAttemptWithoutResult, completeAttemptsQuietly, type Completion, type Database, type DispatchIntent } from "@tasklane/db";
import { refusedForValue } from "@tasklane/db/pg-text";

interface Pending {
  item: Completion;
  resolve: (accepted: boolean) => void;
  reject: (e: unknown) => void;
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
 */
export class CompletionBatcher {
  private pending: Pending[] = [];
  private timer: NodeJS.Timeout | undefined;

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
  ) {}

  /** Resolves true when recorded, false when refused (the lease moved on). */
  complete(item: Completion): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
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
    let recorded: { refused: string[]; dispatch: DispatchIntent[] };
    try {
      recorded = await completeAttemptsQuietly(this.db, batch.map((b) => b.item), this.actor, this.horizonMs);
    } catch (error) {
      await (batch.length === 1 ? this.recordRefused(batch[0]!, error) : this.recordOneByOne(batch));
      return;
    }
    const refusedSet = new Set(recorded.refused);
    for (const b of batch) b.resolve(!refusedSet.has(b.item.taskId));
    await this.release(recorded.dispatch);
  }

  private release(dispatch: DispatchIntent[]): Promise<void> {
    return this.onReleased(dispatch).catch(() => undefined);
  }

  /**
   * A failed batch, again one statement per item: bounded by the batch size,
   * and cut short by the first failure not caused by a value (Postgres gone:
   * the rest would only fail the same way), which rejects what is left.
   */
  private async recordOneByOne(batch: Pending[]): Promise<void> {
    for (const [i, b] of batch.entries()) {
      try {
        const { refused, dispatch } = await completeAttemptsQuietly(this.db, [b.item], this.actor, this.horizonMs);
        b.resolve(refused.length === 0);
        await this.release(dispatch);
      } catch (error) {
        if (!refusedForValue(error)) {
          for (const rest of batch.slice(i)) rest.reject(error);
          return;
        }
        await this.recordRefused(b, error);
      }
    }
  }

  /** One item whose statement failed: without its result if the database refused the value, else rejected. */
  private async recordRefused(b: Pending, error: unknown): Promise<void> {
    if (!refusedForValue(error)) return b.reject(error);
    const reason = error instanceof Error ? error.message : String(error);
    try {
      b.resolve(await this.completeWithoutResult(b.item, `Result not kept: the database refused it (${reason})`));
    } catch (again) {
      b.reject(again);
    }
  }
}
