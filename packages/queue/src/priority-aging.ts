import { Queue } from "bullmq";
import type { RedisClient } from "./connection.js";
import type { KeySpace } from "./naming.js";
import type { TaskJobData } from "./task-job.js";

/** BullMQ scores prioritized jobs as priority * 2^32 + an insertion counter. */
const LANE_WIDTH = 0x100000000;
const SCAN_PER_LANE = 200;

/**
 * Starvation guard for PUSH queues: every `agingMs` a job has been eligible
 * moves it up one lane (LOW counts as NORMAL after one period and as HIGH
 * after two), so LOW work still progresses under sustained HIGH load. Within a
 * lane jobs are in insertion order, so each scan stops at the first job that
 * has not waited one period yet.
 */
export class PriorityAger {
  private readonly queues = new Map<string, Queue<TaskJobData>>();

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: KeySpace,
  ) {}

  async ageAll(agingMs: number, now = Date.now()): Promise<number> {
    let moved = 0;
    for (const name of await this.redis.smembers(this.keys.activeQueues)) moved += await this.ageQueue(name, agingMs, now);
    return moved;
  }

  private queue(name: string): Queue<TaskJobData> {
    let q = this.queues.get(name);
    if (!q) {
      q = new Queue<TaskJobData>(name, { connection: this.redis, prefix: this.keys.prefix });
      // BullMQ re-emits the shared client's connection errors here and, with no listener, prints each
      // with console.error; the client's own listener (createRedis's log) already reports them.
      q.on("error", () => undefined);
      this.queues.set(name, q);
    }
    return q;
  }

  async ageQueue(name: string, agingMs: number, now: number): Promise<number> {
    const key = `${this.keys.prefix}:${name}:prioritized`;
    let moved = 0;
    for (const lane of [2, 3]) {
      const ids = await this.redis.zrangebyscore(key, lane * LANE_WIDTH, (lane + 1) * LANE_WIDTH - 1, "LIMIT", 0, SCAN_PER_LANE);
      for (const id of ids) {
        const job = await this.queue(name).getJob(id);
        if (!job) continue;
        const eligibleSince = job.timestamp + (job.opts.delay ?? 0);
        const waited = now - eligibleSince;
        if (waited < agingMs) break;
        const target = Math.max(1, (job.data.lane ?? lane) - Math.floor(waited / agingMs));
        if (target >= lane) continue;
        await job.changePriority({ priority: target });
        moved++;
      }
    }
    return moved;
  }

  async close(): Promise<void> {
    await Promise.all([...this.queues.values()].map((q) => q.close()));
    this.queues.clear();
  }
}
