import { completeAttempts, type Completion, type Database, type DispatchIntent } from "@tasklane/db";

/**
 * Groups successful outcomes into one UPDATE: under load many attempts finish
 * within the same millisecond, and one statement for 50 of them costs about
 * what one costs alone. A batch is flushed when full or after `maxDelayMs`.
 */
export class CompletionBatcher {
  private pending: { item: Completion; resolve: (accepted: boolean) => void; reject: (e: unknown) => void }[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Database,
    private readonly actor: string,
    /** Receives the next tasks of ordering keys that these completions released. */
    private readonly onReleased: (intents: DispatchIntent[]) => Promise<void>,
    private readonly horizonMs: number,
    private readonly maxBatch = 100,
    private readonly maxDelayMs = 2,
  ) {}

  /** Resolves true when recorded, false when refused (the lease moved on). */
  complete(item: Completion): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      if (this.pending.length >= this.maxBatch) void this.flush();
      else this.timer ??= setTimeout(() => void this.flush(), this.maxDelayMs);
    });
  }

  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return;
    try {
      const { refused, dispatch } = await completeAttempts(this.db, batch.map((b) => b.item), this.actor, this.horizonMs);
      const refusedSet = new Set(refused);
      for (const b of batch) b.resolve(!refusedSet.has(b.item.taskId));
      await this.onReleased(dispatch);
    } catch (error) {
      for (const b of batch) b.reject(error);
    }
  }
}
