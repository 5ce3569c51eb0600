/**
 * ActiveQueues (worker) on a real Redis: what a worker does with a queue its
 * take drained. It looks again when the next delayed job is due, or, with
 * none, takes the queue out of the shared active set. A job that arrived
 * after the take keeps the queue in the set, and so does a doorbell heard
 * meanwhile; nor does re-reading the set forget a queue just rung.
 */
import { createKeySpace, createRedis, type KeySpace } from "@tasklane/queue";
import { afterAll, describe, expect, it } from "vitest";
import { ActiveQueues } from "../../apps/worker/src/fetch/active-queues.js";
import { uniqueRedisPrefix } from "../helpers/test-database.js";

const redis = createRedis("redis://127.0.0.1:6379/0", "active-queues-test");
const prefix = uniqueRedisPrefix("aq");
const AHEAD_MS = 50;
const name = "{ten_aq}.que_aq";

afterAll(async () => {
  const stale = await redis.keys(`${prefix}*`);
  if (stale.length > 0) await redis.del(...stale);
  redis.disconnect();
});

let spaces = 0;
/** One queue in a shared set of its own (a key space per test), and a worker's view of it. */
async function activeQueue(): Promise<{ active: ActiveQueues; keys: KeySpace }> {
  const keys = createKeySpace(`${prefix}-${++spaces}`);
  await redis.sadd(keys.activeQueues, name);
  const active = new ActiveQueues(redis, keys, AHEAD_MS);
  await active.refresh();
  return { active, keys };
}

describe("ActiveQueues", () => {
  it("retires a drained queue with nothing delayed from the shared set and from its own", async () => {
    const { active, keys } = await activeQueue();
    expect(active.ready(Date.now())).toEqual([name]);

    await active.markDrained(name, active.ringsHeard(name), null);
    expect(await redis.sismember(keys.activeQueues, name)).toBe(0);
    expect(active.ready(Date.now())).toEqual([]);

    // Its next doorbell brings it back.
    active.ring(name);
    expect(active.ready(Date.now())).toEqual([name]);
  });

  it("looks at a drained queue again once its next delayed job is due within half the start-ahead", async () => {
    const { active, keys } = await activeQueue();
    const now = Date.now();
    await active.markDrained(name, active.ringsHeard(name), now + 5_000);

    expect(await redis.sismember(keys.activeQueues, name)).toBe(1);
    expect(active.ready(now)).toEqual([]);
    expect(active.msUntilNextDue(now, 60_000)).toBe(5_000 - AHEAD_MS / 2);
    expect(active.ready(now + 5_000 - AHEAD_MS / 2 - 1)).toEqual([]);
    expect(active.ready(now + 5_000 - AHEAD_MS / 2)).toEqual([name]);
  });

  it("a ring for delayed work only brings a planned look forward to that work's gather time, never back", async () => {
    const { active } = await activeQueue();
    const now = Date.now();
    await active.markDrained(name, active.ringsHeard(name), now + 5_000);

    active.ring(name, now + 60_000);
    expect(active.msUntilNextDue(now, 60_000)).toBe(5_000 - AHEAD_MS / 2);
    active.ring(name, now + 1_000);
    expect(active.ready(now + 1_000 - AHEAD_MS / 2 - 1)).toEqual([]);
    expect(active.ready(now + 1_000 - AHEAD_MS / 2)).toEqual([name]);
    // Work due now makes it ready at once.
    active.ring(name);
    expect(active.ready(now)).toEqual([name]);
  });

  it("a ring for delayed work only leaves a ready queue ready, and makes a retired one ready (its own ring may be lost)", async () => {
    const { active } = await activeQueue();
    const now = Date.now();
    active.ring(name, now + 5_000);
    expect(active.ready(now)).toEqual([name]);

    await active.markDrained(name, active.ringsHeard(name), null);
    expect(active.ready(Date.now())).toEqual([]);
    active.ring(name, Date.now() + 5_000);
    expect(active.ready(Date.now())).toEqual([name]);
  });

  it("keeps a queue whose jobs arrived after the take in the shared set, and ready", async () => {
    const { active, keys } = await activeQueue();
    const rings = active.ringsHeard(name);
    // Added after the take that drained the queue, before its bookkeeping.
    await redis.lpush(`${keys.prefix}:${name}:wait`, "job-1");

    await active.markDrained(name, rings, null);
    expect(await redis.sismember(keys.activeQueues, name)).toBe(1);
    expect(active.ready(Date.now())).toEqual([name]);
  });

  it("keeps a queue ready when its doorbell rang during the fetch", async () => {
    const { active, keys } = await activeQueue();
    const rings = active.ringsHeard(name);
    active.ring(name);

    await active.markDrained(name, rings, Date.now() + 60_000);
    expect(active.ready(Date.now())).toEqual([name]);
    await active.markDrained(name, rings, null);
    expect(active.ready(Date.now())).toEqual([name]);
    expect(await redis.sismember(keys.activeQueues, name)).toBe(1);
  });

  it("keeps a queue whose doorbell rang while it was being retired", async () => {
    const { active } = await activeQueue();
    const retiring = active.markDrained(name, active.ringsHeard(name), null);
    // The dispatcher's jobs, SADD and doorbell all land after the SREM and the count.
    active.ring(name);
    await retiring;
    expect(active.ready(Date.now())).toEqual([name]);
  });

  it("keeps a queue rung while the shared set was being read, though the set did not have it yet", async () => {
    const { active, keys } = await activeQueue();
    await active.markDrained(name, active.ringsHeard(name), null);
    expect(active.ready(Date.now())).toEqual([]);

    const refreshing = active.refresh();
    // The doorbell rings from the add script; the dispatcher's SADD comes after it.
    active.ring(name);
    await refreshing;
    expect(await redis.sismember(keys.activeQueues, name)).toBe(0);
    expect(active.ready(Date.now())).toEqual([name]);
  });
});
