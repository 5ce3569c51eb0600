/**
 * FleetLimits (packages/queue): concurrency slots taken several at a time,
 * against real Redis. A worker's fetch wave asks for as many slots as it
 * picked a queue, and must get no more than both limits leave room for.
 */
import { randomBytes } from "node:crypto";
import { createKeySpace, createRedis, FleetLimits, taskSlotId } from "@tasklane/queue";
import { afterAll, describe, expect, it } from "vitest";

describe("FleetLimits slots", () => {
  const redis = createRedis("redis://127.0.0.1:6379/0", "fleet-limits-test");
  const limits = new FleetLimits(redis, createKeySpace(`tl-limits-${randomBytes(4).toString("hex")}`));

  afterAll(() => redis.disconnect());

  it("grants as many slots as the queue's limit leaves room for, and takes them back on release", async () => {
    const held = await limits.acquire("ten_a", "que_1", { tenant: null, queue: 3 }, 60_000, 5);
    expect(held).toHaveLength(3);
    expect(new Set(held).size).toBe(3);
    expect(await limits.acquire("ten_a", "que_1", { tenant: null, queue: 3 }, 60_000, 1)).toEqual([]);

    await limits.release("ten_a", "que_1", ...held.slice(0, 2));
    expect(await limits.acquire("ten_a", "que_1", { tenant: null, queue: 3 }, 60_000, 4)).toHaveLength(2);
  });

  it("counts the tenant's slots across its queues", async () => {
    expect(await limits.acquire("ten_b", "que_1", { tenant: 4, queue: null }, 60_000, 3)).toHaveLength(3);
    expect(await limits.acquire("ten_b", "que_2", { tenant: 4, queue: 10 }, 60_000, 3)).toHaveLength(1);
    // Another tenant is not affected.
    expect(await limits.acquire("ten_c", "que_1", { tenant: 4, queue: null }, 60_000, 3)).toHaveLength(3);
  });

  it("frees slots whose holder never released them once they expire", async () => {
    expect(await limits.acquire("ten_d", "que_1", { tenant: null, queue: 2 }, 50, 2)).toHaveLength(2);
    await new Promise((r) => setTimeout(r, 120));
    expect(await limits.acquire("ten_d", "que_1", { tenant: null, queue: 2 }, 60_000, 2)).toHaveLength(2);
  });

  it("keeps a claimed slot under its task's name, released by that name; slots put back from Postgres count and release the same way", async () => {
    const limit = { tenant: null, queue: 2 };
    const held = await limits.acquire("ten_f", "que_1", limit, 60_000, 2);
    expect(held).toHaveLength(2);
    const first = held[0]!;
    await limits.claim("ten_f", "que_1", first, "task_1", 60_000);
    // Renamed, not added: still two held.
    expect(await limits.acquire("ten_f", "que_1", limit, 60_000, 1)).toEqual([]);
    await limits.release("ten_f", "que_1", first, taskSlotId("task_1"));
    expect(await limits.acquire("ten_f", "que_1", limit, 60_000, 2)).toHaveLength(1);

    // Redis lost the sets (another key space, as after a wipe); the two attempts still running are put back.
    const wiped = new FleetLimits(redis, createKeySpace(`tl-limits-${randomBytes(4).toString("hex")}`));
    const until = new Date(Date.now() + 60_000);
    await wiped.restoreTaskSlots([
      { taskId: "task_2", tenantId: "ten_f", queueId: "que_1", leaseExpiresAt: until },
      { taskId: "task_3", tenantId: "ten_f", queueId: "que_1", leaseExpiresAt: until },
      { taskId: "task_4", tenantId: "ten_f", queueId: "que_1", leaseExpiresAt: new Date(Date.now() - 1_000) },
    ]);
    expect(await wiped.acquire("ten_f", "que_1", limit, 60_000, 1)).toEqual([]);
    await wiped.release("ten_f", "que_1", "not-claimed-yet", taskSlotId("task_2"));
    expect(await wiped.acquire("ten_f", "que_1", limit, 60_000, 2)).toHaveLength(1);
  });

  it("grants every slot, with no ids to release, when neither limit is set", async () => {
    expect(await limits.acquire("ten_e", "que_1", { tenant: null, queue: null }, 60_000, 3)).toEqual(["", "", ""]);
  });

  it("takes back unused start tokens, never past the burst", async () => {
    // 0.01/s: nothing refills during the test.
    expect(await limits.takeStartTokens("ten_g", "que_1", 0.01, 5, 5)).toMatchObject({ granted: 5 });
    await limits.returnStartTokens("ten_g", "que_1", 0.01, 5, 3);
    expect(await limits.takeStartTokens("ten_g", "que_1", 0.01, 5, 5)).toMatchObject({ granted: 3 });
    await limits.returnStartTokens("ten_g", "que_1", 0.01, 5, 50);
    expect(await limits.takeStartTokens("ten_g", "que_1", 0.01, 5, 50)).toMatchObject({ granted: 5 });
    // A bucket that expired (full) stays full: a refund adds nothing.
    await limits.returnStartTokens("ten_g", "que_2", 0.01, 5, 3);
    expect(await limits.takeStartTokens("ten_g", "que_2", 0.01, 5, 50)).toMatchObject({ granted: 5 });
  });
});
