/**
 * MissingJobFinder (packages/queue): the reconciler's check of which of a
 * queue's jobs are gone from Redis or were left taken by a dead worker,
 * against real Redis and jobs BullMQ itself added and took, so a BullMQ
 * release that moves its job or lock keys fails here first.
 */
import { randomBytes } from "node:crypto";
import { createKeySpace, createRedis, MissingJobFinder } from "@tasklane/queue";
import { Queue, Worker } from "bullmq";
import { afterAll, describe, expect, it } from "vitest";

describe("MissingJobFinder", () => {
  const redis = createRedis("redis://127.0.0.1:6379/0", "missing-jobs-test");
  const keys = createKeySpace(`tl-missing-${randomBytes(4).toString("hex")}`);
  const name = "{ten_test}.que_test";
  const queue = new Queue(name, { connection: redis, prefix: keys.prefix });
  const finder = new MissingJobFinder(redis, keys);

  afterAll(async () => {
    await queue.obliterate({ force: true });
    await queue.close();
    redis.disconnect();
  });

  it("names the jobs that are not in Redis, by their position in the question", async () => {
    await queue.addBulk(["a", "c"].map((id) => ({ name: "task", data: { taskId: id }, opts: { jobId: id } })));
    expect(await finder.find(name, ["a", "b", "c", "d"])).toEqual({ gone: [1, 3], orphaned: [], stranded: [] });
    expect(await finder.find(name, [])).toEqual({ gone: [], orphaned: [], stranded: [] });
  });

  it("names a job taken with a lock only once the lock is gone", async () => {
    // Its own queue, and a BullMQ worker that takes a job only when asked: the way workers of earlier versions took them.
    const takenFrom = "{ten_test}.que_taken";
    const own = new Queue(takenFrom, { connection: redis, prefix: keys.prefix });
    const taker = new Worker(takenFrom, null, { connection: createRedis("redis://127.0.0.1:6379/0", "missing-jobs-taker"), prefix: keys.prefix, autorun: false });
    try {
      await own.addBulk(["waiting", "taken"].map((id) => ({ name: "task", data: { taskId: id }, opts: { jobId: id } })));
      expect((await taker.getNextJob("token-1"))?.id).toBe("waiting");
      // Taken and locked: its taker is alive.
      expect(await finder.find(takenFrom, ["waiting", "taken"])).toEqual({ gone: [], orphaned: [], stranded: [] });
      await redis.del(`${keys.jobKey(takenFrom, "waiting")}:lock`);
      expect(await finder.find(takenFrom, ["taken", "waiting", "never-added"])).toEqual({ gone: [2], orphaned: [1], stranded: [] });
    } finally {
      await taker.close();
      await own.obliterate({ force: true });
      await own.close();
    }
  });

  it("names a job whose hash outlived its place in the wait, prioritized or delayed set", async () => {
    // Its own queue: one job in each of the three sets a worker takes from, then each set lost in turn.
    const lost = "{ten_test}.que_lost";
    const own = new Queue(lost, { connection: redis, prefix: keys.prefix });
    try {
      await own.add("task", { taskId: "w" }, { jobId: "w" });
      await own.add("task", { taskId: "p" }, { jobId: "p", priority: 2 });
      await own.add("task", { taskId: "d" }, { jobId: "d", delay: 60_000 });
      expect(await finder.find(lost, ["w", "p", "d"])).toEqual({ gone: [], orphaned: [], stranded: [] });
      await redis.del(`${keys.prefix}:${lost}:delayed`);
      expect(await finder.find(lost, ["w", "p", "d"])).toEqual({ gone: [], orphaned: [], stranded: [2] });
      await redis.del(`${keys.prefix}:${lost}:prioritized`, `${keys.prefix}:${lost}:wait`);
      expect(await finder.find(lost, ["w", "p", "d", "x"])).toEqual({ gone: [3], orphaned: [], stranded: [0, 1, 2] });
    } finally {
      await own.obliterate({ force: true });
      await own.close();
    }
  });

  it("checks a sweep page of 2,000 jobs in one call", async () => {
    const ids = Array.from({ length: 2000 }, (_, i) => `bulk-${i}`);
    await queue.addBulk(ids.filter((_, i) => i % 500 !== 7).map((id) => ({ name: "task", data: { taskId: id }, opts: { jobId: id } })));
    expect(await finder.find(name, ids)).toEqual({ gone: [7, 507, 1007, 1507], orphaned: [], stranded: [] });
  });
});
