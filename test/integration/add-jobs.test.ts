/**
 * The task dispatcher (packages/queue) writes jobs with its own script
 * (scripts/add-jobs.lua) in BullMQ's layout. Here, against real Redis, its
 * jobs are compared field by field with the same jobs added by BullMQ's
 * addBulk, read and re-prioritized through BullMQ's Queue, and taken by the
 * worker's JobTaker: a BullMQ release that moves the layout fails here.
 */
import { randomBytes } from "node:crypto";
import { Priority } from "@tasklane/core";
import type { DispatchIntent } from "@tasklane/db";
import { createKeySpace, createRedis, createTaskDispatcher, JobTaker, jobIdFor, parseDoorbell } from "@tasklane/queue";
import { Queue } from "bullmq";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";

describe("task dispatcher (add-jobs.lua)", () => {
  const redis = createRedis("redis://127.0.0.1:6379/0", "add-jobs-test");
  const keys = createKeySpace(`tl-add-${randomBytes(4).toString("hex")}`);
  const tenantId = "ten_add";
  const ours = keys.bullQueueName(tenantId, "que_ours");
  const theirs = keys.bullQueueName(tenantId, "que_theirs");
  const bull = new Queue(theirs, { connection: redis, prefix: keys.prefix });
  const oursViaBull = new Queue(ours, { connection: redis, prefix: keys.prefix });
  const dispatcher = createTaskDispatcher(redis, keys);
  const taker = new JobTaker(redis, keys);

  const intent = (taskId: string, priority: Priority, runAt: Date): DispatchIntent => ({ taskId, tenantId, queueId: "que_ours", priority, runAt, dispatchGeneration: 1 });
  const rank = { [Priority.HIGH]: 1, [Priority.NORMAL]: 2, [Priority.LOW]: 3 } as Record<Priority, number>;
  /** The job BullMQ's addBulk would write for the same intent, in the other queue. */
  const bullJob = (i: DispatchIntent, now: number) => ({
    name: "task",
    data: { taskId: i.taskId, tenantId, queueId: "que_ours", dispatchGeneration: 1, lane: rank[i.priority] },
    opts: { jobId: jobIdFor(i.taskId, 1), priority: rank[i.priority], delay: Math.max(0, i.runAt.getTime() - now), removeOnComplete: true, removeOnFail: true, attempts: 1 },
  });
  const zset = (queue: string, set: string) => redis.zrange(`${keys.prefix}:${queue}:${set}`, 0, -1, "WITHSCORES");

  // The dispatcher refuses a connection that is not ready yet (its tasks are the outbox's then): wait for it.
  beforeAll(async () => {
    await redis.ping();
  });

  afterAll(async () => {
    for (const q of [bull, oursViaBull]) {
      await q.obliterate({ force: true });
      await q.close();
    }
    await redis.del(keys.activeQueues);
    redis.disconnect();
  });

  it("writes each job as BullMQ's addBulk does: the same hash fields, the same scores", async () => {
    const now = Date.now();
    const intents = [intent("t-normal", Priority.NORMAL, new Date(now - 5)), intent("t-high", Priority.HIGH, new Date(now)), intent("t-later", Priority.LOW, new Date(now + 60_000))];
    await dispatcher.dispatch(intents);
    await bull.addBulk(intents.map((i) => bullJob(i, now)));

    for (const i of intents) {
      const id = jobIdFor(i.taskId, 1);
      const mine = await redis.hgetall(keys.jobKey(ours, id));
      const bulls = await redis.hgetall(keys.jobKey(theirs, id));
      const { timestamp: myTimestamp, opts: myOpts, delay: myDelay, ...myRest } = mine;
      const { timestamp: bullTimestamp, opts: bullOpts, delay: bullDelay, ...bullRest } = bulls;
      expect(myRest).toEqual(bullRest);
      expect(JSON.parse(myOpts as string)).toEqual({ ...JSON.parse(bullOpts as string), delay: Number(myDelay) });
      // Both stamp the job with the adding client's clock; the delay is the same instant seen from each.
      expect(Number(myTimestamp) + Number(myDelay)).toBe(i.runAt.getTime() > now ? i.runAt.getTime() : Number(myTimestamp));
      expect(Math.abs(Number(myTimestamp) + Number(myDelay) - (Number(bullTimestamp) + Number(bullDelay)))).toBeLessThan(1000);
    }
    // Due jobs: priority * 2^32 + the queue's counter, in the order given.
    expect(await zset(ours, "prioritized")).toEqual(await zset(theirs, "prioritized"));
    const [laterId, laterScore] = await zset(ours, "delayed");
    expect(laterId).toBe(jobIdFor("t-later", 1));
    expect(Math.floor(Number(laterScore) / 0x1000)).toBe(now + 60_000);
    expect(await redis.sismember(keys.activeQueues, ours)).toBe(1);
  });

  it("is read, counted and re-prioritized by BullMQ's own Queue", async () => {
    expect(await oursViaBull.getJobCounts("prioritized", "delayed", "wait")).toEqual({ prioritized: 2, delayed: 1, wait: 0 });
    const later = await oursViaBull.getJob(jobIdFor("t-later", 1));
    expect(later?.data).toEqual({ taskId: "t-later", tenantId, queueId: "que_ours", dispatchGeneration: 1, lane: 3 });
    expect(later?.opts.priority).toBe(3);
    const normal = await oursViaBull.getJob(jobIdFor("t-normal", 1));
    await normal?.changePriority({ priority: 1 });
    expect((await taker.take(ours, 10)).jobs.map((j) => j.data.taskId)).toEqual(["t-high", "t-normal"]);
  });

  it("adds nothing for a generation that is already there, and keeps same-millisecond delayed jobs in order", async () => {
    const due = Date.now() + 50;
    const batch = Array.from({ length: 5 }, (_, n) => intent(`t-same-${n}`, Priority.NORMAL, new Date(due)));
    await dispatcher.dispatch(batch);
    const delayedBefore = await zset(ours, "delayed");
    const counterBefore = await redis.get(`${keys.prefix}:${ours}:pc`);
    await dispatcher.dispatch([...batch, intent("t-later", Priority.LOW, new Date(due + 60_000))]);
    expect(await zset(ours, "delayed")).toEqual(delayedBefore);
    expect(await redis.get(`${keys.prefix}:${ours}:pc`)).toBe(counterBefore);

    const { jobs: taken } = await taker.take(ours, 10, due + 1);
    expect(taken.map((j) => j.data.taskId)).toEqual(batch.map((i) => i.taskId));
    expect(await oursViaBull.getJobCounts("prioritized", "delayed")).toEqual({ prioritized: 0, delayed: 1 });
  });

  it("splits a large dispatch over several calls and adds every job once", async () => {
    const now = Date.now();
    const many = Array.from({ length: 2_345 }, (_, n) => intent(`t-many-${n}`, Priority.LOW, new Date(now)));
    await dispatcher.dispatch(many);
    const { jobs: taken } = await taker.take(ours, 5_000);
    expect(taken).toHaveLength(many.length);
    expect(new Set(taken.map((j) => j.data.taskId)).size).toBe(many.length);
    expect(taken[0]?.data.taskId).toBe("t-many-0");
    expect(taken.at(-1)?.data.taskId).toBe("t-many-2344");
  });

  it("rings the doorbell from the script once its jobs are in, and marks the queue active after that", async () => {
    // The dispatcher pipelines the script with the SADD; ioredis resends a script Redis lost outside that
    // pipeline, so the ring's order must not depend on the pipeline's: it comes from the script itself.
    const monitor = await redis.monitor();
    const seen: { command: string; source: string }[] = [];
    monitor.on("monitor", (_time: string, args: string[], source: string) => {
      if (args.some((a) => a.includes(keys.prefix))) seen.push({ command: `${args[0]?.toLowerCase()} ${args[1]}`, source });
    });
    try {
      await dispatcher.dispatch([intent("t-rung", Priority.NORMAL, new Date())]);
      const order = async () => {
        const commands = seen.map((c) => c.command);
        const zadd = commands.indexOf(`zadd ${keys.prefix}:${ours}:prioritized`);
        const ring = commands.indexOf(`publish ${keys.doorbellChannel}`);
        const sadd = commands.indexOf(`sadd ${keys.activeQueues}`);
        expect(sadd).toBeGreaterThan(-1);
        return { zadd, ring, sadd };
      };
      const { zadd, ring, sadd } = await vi.waitFor(order, { timeout: 5_000, interval: 20 });
      expect(zadd).toBeGreaterThan(-1);
      expect(ring).toBeGreaterThan(zadd);
      expect(sadd).toBeGreaterThan(ring);
      expect(seen[ring]?.source).toBe("lua");
    } finally {
      monitor.disconnect();
    }
  });

  it("rings with the earliest due time when every job of the call is delayed, and as due now otherwise", async () => {
    const subscriber = redis.duplicate();
    const heard: string[] = [];
    await subscriber.subscribe(keys.doorbellChannel);
    subscriber.on("message", (_channel: string, message: string) => heard.push(message));
    try {
      const now = Date.now();
      const soon = new Date(now + 60_000);
      const later = new Date(now + 90_000);
      await dispatcher.dispatch([intent("t-ring-later", Priority.NORMAL, later), intent("t-ring-soon", Priority.LOW, soon)]);
      await dispatcher.dispatch([intent("t-ring-mixed-later", Priority.NORMAL, later), intent("t-ring-mixed-now", Priority.NORMAL, new Date(now - 1))]);
      await vi.waitFor(() => expect(heard).toHaveLength(2), { timeout: 5_000, interval: 20 });
      expect(heard.map(parseDoorbell)).toEqual([
        { queueName: ours, dueAt: soon.getTime() },
        { queueName: ours, dueAt: null },
      ]);
    } finally {
      subscriber.disconnect();
    }
  });
});
