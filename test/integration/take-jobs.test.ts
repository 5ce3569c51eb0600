/**
 * JobTaker (packages/queue): the worker's one-call take of a queue's jobs,
 * against real Redis and jobs added by BullMQ itself, so a BullMQ release
 * that moves its key layout fails here before it reaches a worker.
 */
import { randomBytes } from "node:crypto";
import { createKeySpace, createRedis, JobTaker } from "@tasklane/queue";
import { Queue } from "bullmq";
import { afterAll, describe, expect, it } from "vitest";

describe("JobTaker", () => {
  const redis = createRedis("redis://127.0.0.1:6379/0", "take-jobs-test");
  const keys = createKeySpace(`tl-take-${randomBytes(4).toString("hex")}`);
  const name = "{ten_test}.que_test";
  const queue = new Queue(name, { connection: redis, prefix: keys.prefix });
  const taker = new JobTaker(redis, keys);
  const job = (id: string, priority: number, delay = 0) => ({ name: "task", data: { taskId: id }, opts: { jobId: id, priority, delay } });

  afterAll(async () => {
    await queue.obliterate({ force: true });
    await queue.close();
    redis.disconnect();
  });

  it("takes jobs in BullMQ's priority order, due delayed ones included, and deletes them", async () => {
    const now = Date.now();
    await queue.addBulk([job("low", 3), job("normal-1", 2), job("high", 1), job("normal-2", 2), job("due", 1, 1), job("later", 1, 3_600_000)]);

    const { jobs: first } = await taker.take(name, 3, now + 1000);
    expect(first.map((j) => j.id)).toEqual(["high", "due", "normal-1"]);
    expect(first.map((j) => j.data.taskId)).toEqual(["high", "due", "normal-1"]);
    for (const { id } of first) expect(await redis.exists(keys.jobKey(name, id))).toBe(0);

    // What was not taken is still BullMQ's: counted in its states, and taken next.
    expect(await queue.getJobCounts("prioritized", "delayed", "active")).toEqual({ prioritized: 2, delayed: 1, active: 0 });
    const { jobs: rest } = await taker.take(name, 10, now + 1000);
    expect(rest.map((j) => j.id)).toEqual(["normal-2", "low"]);
    expect((await taker.take(name, 10, now + 1000)).jobs).toEqual([]);
    expect((await queue.getJob("later"))?.data).toEqual({ taskId: "later" });
    await queue.remove("later");
  });

  it("takes jobs added without a priority from the wait list, oldest first", async () => {
    await queue.addBulk([job("w1", 0), job("w2", 0), job("p1", 1)]);
    expect((await taker.take(name, 2)).jobs.map((j) => j.id)).toEqual(["w1", "w2"]);
    expect((await taker.take(name, 2)).jobs.map((j) => j.id)).toEqual(["p1"]);
    expect(await queue.getJobCounts("wait", "prioritized")).toEqual({ wait: 0, prioritized: 0 });
  });

  it("says in the same reply whether it drained the queue, and when its next delayed job is due", async () => {
    const before = Date.now();
    await queue.addBulk([job("d1", 0), job("d2", 1), job("soon", 1, 60_000), job("later", 1, 3_600_000)]);
    const after = Date.now();

    // Exactly what was runnable: the lists are empty now, but this take could not know it.
    const full = await taker.take(name, 2);
    expect(full).toMatchObject({ drained: false, nextDelayedAt: null });
    expect(full.jobs.map((j) => j.id)).toEqual(["d1", "d2"]);

    const short = await taker.take(name, 2);
    expect(short.jobs).toEqual([]);
    expect(short.drained).toBe(true);
    expect(short.nextDelayedAt).toBeGreaterThanOrEqual(before + 60_000);
    expect(short.nextDelayedAt).toBeLessThanOrEqual(after + 60_000);

    // Once "soon" is due it is taken, and the next one due is "later".
    const due = await taker.take(name, 5, after + 60_000);
    expect(due.jobs.map((j) => j.id)).toEqual(["soon"]);
    expect(due).toMatchObject({ drained: true });
    expect(due.nextDelayedAt).toBeGreaterThanOrEqual(before + 3_600_000);
    expect(due.nextDelayedAt).toBeLessThanOrEqual(after + 3_600_000);

    await queue.remove("later");
    expect(await taker.take(name, 5)).toEqual({ jobs: [], drained: true, nextDelayedAt: null });
  });
});
