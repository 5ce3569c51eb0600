import { randomUUID } from "node:crypto";
import type { RedisClient } from "./connection.js";
import type { KeySpace } from "./naming.js";
import { luaScript } from "./scripts/load-scripts.js";


interface LimitCommands {
  tasklaneAcquireSlot(tenantKey: string, queueKey: string, now: number, expiry: number, tenantLimit: number, queueLimit: number, ...ids: string[]): Promise<number>;
  tasklaneTakeToken(bucketKey: string, rate: number, burst: number, want: number): Promise<[number, number]>;
  tasklaneReturnTokens(bucketKey: string, rate: number, burst: number, back: number): Promise<number>;
}

/** The member a running attempt's slot is kept under (FleetLimits.claim). */
export const taskSlotId = (taskId: string): string => `task:${taskId}`;

/**
 * Limits that hold across the whole worker fleet, kept in Redis with one
 * atomic script per operation: per-tenant maxConcurrency, per-queue
 * concurrency (slots that expire with the lease, so a dead worker frees them),
 * and per-queue start rate (token bucket).
 */
export class FleetLimits {
  private readonly redis: RedisClient & LimitCommands;

  constructor(
    redis: RedisClient,
    private readonly keys: KeySpace,
  ) {
    if (!("tasklaneAcquireSlot" in redis)) {
      redis.defineCommand("tasklaneAcquireSlot", { numberOfKeys: 2, lua: luaScript("acquire-slot") });
      redis.defineCommand("tasklaneTakeToken", { numberOfKeys: 1, lua: luaScript("take-token") });
      redis.defineCommand("tasklaneReturnTokens", { numberOfKeys: 1, lua: luaScript("return-tokens") });
    }
    this.redis = redis as RedisClient & LimitCommands;
  }

  private tenantSlots = (tenantId: string) => `${this.keys.prefix}:{${tenantId}}:slots`;
  private queueSlots = (tenantId: string, queueId: string) => `${this.keys.prefix}:{${tenantId}}:slots:${queueId}`;

  /**
   * Up to `count` slots of the tenant and the queue at once, as many as both
   * limits leave room for: the ids of those taken (none at a limit). Without
   * limits every slot is granted with the id "", which release ignores.
   */
  async acquire(tenantId: string, queueId: string, limits: { tenant: number | null; queue: number | null }, holdMs: number, count = 1): Promise<string[]> {
    if (limits.tenant === null && limits.queue === null) return new Array<string>(count).fill("");
    const ids = Array.from({ length: count }, () => randomUUID());
    const now = Date.now();
    const taken = await this.redis.tasklaneAcquireSlot(
      this.tenantSlots(tenantId),
      this.queueSlots(tenantId, queueId),
      now,
      now + holdMs,
      limits.tenant ?? -1,
      limits.queue ?? -1,
      ...ids,
    );
    return ids.slice(0, taken);
  }

  /** Gives slots back (an attempt finished, or the queue had fewer jobs than slots were taken for). */
  async release(tenantId: string, queueId: string, ...slotIds: string[]): Promise<void> {
    const ids = slotIds.filter((id) => id !== "");
    if (ids.length === 0) return;
    await this.redis.pipeline().zrem(this.tenantSlots(tenantId), ...ids).zrem(this.queueSlots(tenantId, queueId), ...ids).exec();
  }

  /**
   * Hands a slot taken for a fetch to the attempt that runs in it, until the
   * attempt's lease ends: the slot is renamed after its task (taskSlotId), so
   * that Postgres alone can say which slots are held (restoreTaskSlots, after
   * Redis lost them) and the attempt's release finds the slot under that name.
   * A slot is 0-N members of the two sets; `slotId` "" (no limits) holds none.
   */
  async claim(tenantId: string, queueId: string, slotId: string, taskId: string, holdMs: number): Promise<void> {
    if (!slotId) return;
    const expiry = Date.now() + holdMs;
    const tenantKey = this.tenantSlots(tenantId);
    const queueKey = this.queueSlots(tenantId, queueId);
    const taskSlot = taskSlotId(taskId);
    await this.redis
      .pipeline()
      .zrem(tenantKey, slotId)
      .zrem(queueKey, slotId)
      .zadd(tenantKey, expiry, taskSlot)
      .zadd(queueKey, expiry, taskSlot)
      .pexpire(tenantKey, holdMs, "GT")
      .pexpire(queueKey, holdMs, "GT")
      .exec();
  }

  /**
   * Puts back the slots of attempts still running (from Postgres) after Redis
   * lost them, each until its lease ends, before the queues' jobs are re-added:
   * otherwise the empty sets let every worker start up to a whole limit more
   * next to the attempts still running.
   */
  async restoreTaskSlots(running: readonly { taskId: string; tenantId: string; queueId: string; leaseExpiresAt: Date }[]): Promise<void> {
    if (running.length === 0) return;
    const now = Date.now();
    const pipeline = this.redis.pipeline();
    for (const r of running) {
      const expiry = r.leaseExpiresAt.getTime();
      if (expiry <= now) continue;
      for (const key of [this.tenantSlots(r.tenantId), this.queueSlots(r.tenantId, r.queueId)]) {
        pipeline.zadd(key, expiry, taskSlotId(r.taskId)).pexpire(key, expiry - now, "GT");
      }
    }
    await pipeline.exec();
  }

  /**
   * Whether Redis can answer these calls now. While it cannot, a call waits
   * in ioredis's offline queue until Redis is back (maxRetriesPerRequest:
   * null): right for the worker's fetch, which has nothing to do without
   * Redis, not for a request that owes its caller an answer (a PULL lease).
   */
  get redisReady(): boolean {
    return this.redis.status === "ready";
  }

  /** Up to `want` starts (pull leases take a batch): how many are granted, and the wait for one when none. */
  async takeStartTokens(tenantId: string, queueId: string, perSecond: number, burst: number, want: number): Promise<{ granted: number; waitMs: number }> {
    const [granted, waitMs] = await this.redis.tasklaneTakeToken(this.rateBucket(tenantId, queueId), perSecond, burst, want);
    return { granted, waitMs };
  }

  /**
   * Gives back tokens takeStartTokens granted for starts that did not happen
   * (fewer tasks than tokens), up to the bucket's burst (scripts/return-tokens.lua).
   */
  async returnStartTokens(tenantId: string, queueId: string, perSecond: number, burst: number, count: number): Promise<void> {
    if (count <= 0) return;
    await this.redis.tasklaneReturnTokens(this.rateBucket(tenantId, queueId), perSecond, burst, count);
  }

  private rateBucket = (tenantId: string, queueId: string) => `${this.keys.prefix}:{${tenantId}}:rate:${queueId}`;
}
