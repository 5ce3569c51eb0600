/**
 * Finished attempts per queue over a recent window, bucketed by time, read
 * from the task_events audit trail (countAttemptOutcomes): a success is a
 * RUNNING -> SUCCEEDED event, a failure RUNNING -> RETRYING or DEAD.
 */
import { countAttemptOutcomes, type Database } from "@tasklane/db";

export interface ActivityWindow {
  minutes: number;
  bucketMinutes: number;
}

export interface QueueActivityRow {
  queue: string;
  buckets: { start: Date; succeeded: number; failed: number }[];
}

export class TaskActivityService {
  constructor(
    private readonly db: Database,
    private readonly now: () => number = Date.now,
  ) {}

  /** Every queue of the tenant (idle ones too), buckets aligned to the clock, the current one partial. */
  async recent(tenantId: string, { minutes, bucketMinutes }: ActivityWindow): Promise<QueueActivityRow[]> {
    const bucketMs = bucketMinutes * 60_000;
    const count = Math.max(1, Math.ceil(minutes / bucketMinutes));
    const start = Math.floor(this.now() / bucketMs) * bucketMs - (count - 1) * bucketMs;
    const [queues, counts] = await Promise.all([
      this.db.pool.query<{ name: string }>("SELECT name FROM queues WHERE tenant_id = $1 ORDER BY name", [tenantId]),
      countAttemptOutcomes(this.db.pool, tenantId, new Date(start), bucketMs),
    ]);
    const byQueue = new Map<string, QueueActivityRow>(
      queues.rows.map((q) => [
        q.name,
        { queue: q.name, buckets: Array.from({ length: count }, (_, i) => ({ start: new Date(start + i * bucketMs), succeeded: 0, failed: 0 })) },
      ]),
    );
    for (const row of counts) {
      const bucket = byQueue.get(row.queue)?.buckets[row.bucket];
      if (bucket === undefined) continue;
      bucket.succeeded += row.succeeded;
      bucket.failed += row.failed;
    }
    return [...byQueue.values()];
  }
}
