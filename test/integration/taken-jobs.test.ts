/**
 * TakenJobs (packages/queue): the worker's one-call removal of the jobs it
 * took from a BullMQ queue, against real Redis and real BullMQ.
 */
import { randomBytes } from "node:crypto";
import { createKeySpace, createRedis, TakenJobs } from "@tasklane/queue";
import { Queue, Worker } from "bullmq";
import { afterAll, describe, expect, it } from "vitest";

describe("TakenJobs", () => {
  const redis = createRedis("redis://127.0.0.1:6379/0", "taken-jobs-test");
  const keys = createKeySpace(`tl-taken-${randomBytes(4).toString("hex")}`);
  const name = "{ten_test}.que_test";
  const queue = new Queue(name, { connection: redis, prefix: keys.prefix });
  const worker = new Worker(name, null, { connection: redis, prefix: keys.prefix, autorun: false });

  afterAll(async () => {
    await worker.close(true);
    await queue.obliterate({ force: true });
    await queue.close();
    redis.disconnect();
  });

  it("drops the jobs taken under its token, and leaves another holder's job alone", async () => {
    await queue.addBulk(["a", "b", "c", "d"].map((id) => ({ name: "task", data: {}, opts: { jobId: id } })));
    const mine = [await worker.getNextJob("token-1", { block: false }), await worker.getNextJob("token-1", { block: false })];
    const theirs = await worker.getNextJob("token-2", { block: false });
    const ids = mine.map((j) => j?.id as string);
    expect(ids).toHaveLength(2);

    const dropped = await new TakenJobs(redis, keys).drop(name, "token-1", [...ids, theirs?.id as string]);

    expect(dropped).toBe(2);
    for (const id of ids) expect(await redis.exists(keys.jobKey(name, id), `${keys.jobKey(name, id)}:lock`)).toBe(0);
    expect(await redis.lrange(`${keys.prefix}:${name}:active`, 0, -1)).toEqual([theirs?.id]);
    expect(await redis.exists(keys.jobKey(name, theirs?.id as string))).toBe(1);
    // The job nobody took is still waiting.
    expect(await queue.getWaitingCount()).toBe(1);
  });
});
