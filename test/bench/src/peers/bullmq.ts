/**
 * Raw BullMQ: Queue.add / addBulk in the harness, a Worker with a no-op
 * processor (CONSUMER_CONCURRENCY slots, like Tasklane's workers) in its own
 * process. Completed jobs are removed, as Tasklane removes its jobs.
 */
import { Queue, Worker, type JobsOptions } from "bullmq";
import type { Redis } from "ioredis";
import { CONSUMER_CONCURRENCY } from "../lib/concurrency.js";
import { Probe } from "../lib/probe.js";
import { refOf } from "../lib/probe-protocol.js";
import type { Recorder } from "../lib/recorder.js";
import { BENCH_REDIS_URL, benchRedis, flushBenchRedis, redisServerProcess } from "../lib/redis.js";
import type { BenchSystem, TaskRequest, WatchedProcess } from "../lib/system.js";
import { sleep } from "../lib/time.js";

const PREFIX = "bullb";
export const BULLMQ_SETTINGS = `Worker concurrency ${CONSUMER_CONCURRENCY}, removeOnComplete, one worker process`;

export class BullMqSystem implements BenchSystem {
  readonly label = "BullMQ";
  readonly database = undefined;
  probe: Probe | undefined;
  private readonly connection: Redis;
  private readonly queue: Queue;

  private constructor(private readonly queueName: string) {
    this.connection = benchRedis();
    this.queue = new Queue(queueName, { connection: this.connection, prefix: PREFIX });
  }

  static async create(queueName = "bench"): Promise<BullMqSystem> {
    await flushBenchRedis();
    const system = new BullMqSystem(queueName);
    await system.queue.waitUntilReady();
    return system;
  }

  async submitMany(tasks: TaskRequest[]): Promise<string[]> {
    const now = Date.now();
    const jobs = await this.queue.addBulk(tasks.map((t) => ({ name: "noop", data: payloadOf(t), opts: optionsOf(t, now) })));
    return jobs.map((j) => String(j.id));
  }

  async submitOne(task: TaskRequest): Promise<string> {
    const job = await this.queue.add("noop", payloadOf(task), optionsOf(task, Date.now()));
    return String(job.id);
  }

  async startConsumers(): Promise<void> {
    this.probe ??= await Probe.start("bullmq-worker", { role: "bullmq-worker", redisUrl: BENCH_REDIS_URL, prefix: PREFIX, queue: this.queueName, concurrency: CONSUMER_CONCURRENCY });
  }

  async unfinished(): Promise<number> {
    const counts = await this.queue.getJobCounts("wait", "active", "delayed", "prioritized", "waiting-children");
    return Object.values(counts).reduce((a, b) => a + b, 0);
  }

  async failed(): Promise<number> {
    return this.queue.getFailedCount();
  }

  async lastFinishedAt(): Promise<number | undefined> {
    // The worker reports its completions every 50 ms: let the last report arrive.
    await sleep(120);
    return this.probe?.lastDoneAt || undefined;
  }

  assertAlive(): void {
    this.probe?.assertAlive();
  }

  processes(): WatchedProcess[] {
    return this.probe ? [{ label: "BullMQ worker", pid: this.probe.pid }, ...redisServerProcess()] : [];
  }

  async close(): Promise<void> {
    await this.probe?.stop();
    await this.queue.close();
    this.connection.disconnect();
  }
}

const payloadOf = (t: TaskRequest) => (t.ref === undefined ? {} : { ref: t.ref });

function optionsOf(t: TaskRequest, now: number): JobsOptions {
  return { removeOnComplete: true, removeOnFail: 1000, ...(t.runAt === undefined ? {} : { delay: Math.max(0, t.runAt - now) }) };
}

/** Probe side: the BullMQ Worker. */
export async function runBullMqWorker(config: { redisUrl: string; prefix: string; queue: string; concurrency: number }, recorder: Recorder): Promise<() => Promise<void>> {
  const { Redis } = await import("ioredis");
  const connection = new Redis(config.redisUrl, { maxRetriesPerRequest: null });
  const worker = new Worker(
    config.queue,
    async (job) => {
      recorder.start(String(job.id), refOf(job.data));
    },
    { connection, prefix: config.prefix, concurrency: config.concurrency },
  );
  worker.on("completed", () => recorder.completed());
  worker.on("error", (error) => recorder.fail(error));
  await worker.waitUntilReady();
  recorder.ready();
  return async () => {
    await worker.close();
    connection.disconnect();
  };
}
