import { randomUUID } from "node:crypto";
import type { RedisClient } from "./connection.js";
import type { KeySpace } from "./naming.js";
import { luaScript } from "./scripts/load-scripts.js";

export type SlotOutcome = { acquired: true; slotId: string } | { acquired: false; reason: "tenant" | "queue" };

interface LimitCommands {
  tasklaneAcquireSlot(tenantKey: string, queueKey: string, now: number, expiry: number, id: string, tenantLimit: number, queueLimit: number): Promise<number>;
  tasklaneTakeToken(bucketKey: string, rate: number, burst: number, want: number): Promise<[number, number]>;
}

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
    }
    this.redis = redis as RedisClient & LimitCommands;
  }

  private tenantSlots = (tenantId: string) => `${this.keys.prefix}:{${tenantId}}:slots`;
  private queueSlots = (tenantId: string, queueId: string) => `${this.keys.prefix}:{${tenantId}}:slots:${queueId}`;

  async acquire(tenantId: string, queueId: string, limits: { tenant: number | null; queue: number | null }, holdMs: number): Promise<SlotOutcome> {
    if (limits.tenant === null && limits.queue === null) return { acquired: true, slotId: "" };
    const slotId = randomUUID();
    const now = Date.now();
    const code = await this.redis.tasklaneAcquireSlot(
      this.tenantSlots(tenantId),
      this.queueSlots(tenantId, queueId),
      now,
      now + holdMs,
      slotId,
      limits.tenant ?? -1,
      limits.queue ?? -1,
    );
    if (code === 1) return { acquired: true, slotId };
    return { acquired: false, reason: code === 0 ? "tenant" : "queue" };
  }

  async release(tenantId: string, queueId: string, slotId: string): Promise<void> {
    if (!slotId) return;
    await this.redis.pipeline().zrem(this.tenantSlots(tenantId), slotId).zrem(this.queueSlots(tenantId, queueId), slotId).exec();
  }

  /** Moves a held slot's expiry (to the attempt's real lease end, once it is known). */
  async extend(tenantId: string, queueId: string, slotId: string, holdMs: number): Promise<void> {
    if (!slotId) return;
    const expiry = Date.now() + holdMs;
    const tenantKey = this.tenantSlots(tenantId);
    const queueKey = this.queueSlots(tenantId, queueId);
    await this.redis
      .pipeline()
      .zadd(tenantKey, "XX", expiry, slotId)
      .zadd(queueKey, "XX", expiry, slotId)
      .pexpire(tenantKey, holdMs, "GT")
      .pexpire(queueKey, holdMs, "GT")
      .exec();
  }

  /** One start of a rate-limited queue: 0 when allowed, else ms until a token is there. */
  async takeStartToken(tenantId: string, queueId: string, perSecond: number, burst: number): Promise<number> {
    const { granted, waitMs } = await this.takeStartTokens(tenantId, queueId, perSecond, burst, 1);
    return granted === 1 ? 0 : waitMs;
  }

  /** Up to `want` starts (pull leases take a batch): how many are granted, and the wait for one when none. */
  async takeStartTokens(tenantId: string, queueId: string, perSecond: number, burst: number, want: number): Promise<{ granted: number; waitMs: number }> {
    const [granted, waitMs] = await this.redis.tasklaneTakeToken(`${this.keys.prefix}:{${tenantId}}:rate:${queueId}`, perSecond, burst, want);
    return { granted, waitMs };
  }
}
