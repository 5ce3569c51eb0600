/**
 * graphile-worker 0.17 (0.18 needs Node 22): WorkerUtils.addJob / addJobs in
 * the harness, a runner with a no-op task in its own process. Two settings:
 * its defaults (besides concurrency), and the batching features its docs
 * recommend for high throughput (local queue, batched completions).
 */
import { Logger, makeWorkerUtils, run, runMigrations, type WorkerUtils } from "graphile-worker";
import pg from "pg";
import { Probe } from "../lib/probe.js";
import { refOf } from "../lib/probe-protocol.js";
import type { Recorder } from "../lib/recorder.js";
import type { BenchDatabase } from "../lib/postgres.js";
import type { BenchSystem, TaskRequest, WatchedProcess } from "../lib/system.js";

const CONCURRENCY = 32;
const LOCAL_QUEUE = 500;
export const GRAPHILE_SETTINGS = `concurrency ${CONCURRENCY} (pool ${CONCURRENCY + 2}), default polling (2 s) and LISTEN/NOTIFY`;
export const GRAPHILE_BATCHED_SETTINGS = `as above plus localQueue.size ${LOCAL_QUEUE}, completeJobBatchDelay 0, failJobBatchDelay 0`;

/** Warnings and errors only: graphile logs every job at info. */
const quietLogger = new Logger(() => (level, message) => {
  if (level === "error" || level === "warning") process.stderr.write(`[graphile-worker] ${message}\n`);
});

export class GraphileSystem implements BenchSystem {
  probe: Probe | undefined;

  private constructor(
    readonly label: string,
    private readonly db: BenchDatabase,
    private readonly utils: WorkerUtils,
    private readonly pool: pg.Pool,
    private readonly batched: boolean,
  ) {}

  get database(): BenchDatabase {
    return this.db;
  }

  static async create(db: BenchDatabase, batched: boolean): Promise<GraphileSystem> {
    // Our own pool, so its end is ours to await and a connection dropped with the
    // database afterwards cannot surface as an unhandled 'error' event.
    // (graphile-worker warns on stderr unless the pool and each of its clients have an 'error' listener.)
    const pool = new pg.Pool({ connectionString: db.url, max: 8 });
    pool.on("error", () => undefined);
    pool.on("connect", (client) => client.on("error", () => undefined));
    await runMigrations({ pgPool: pool, logger: quietLogger });
    const utils = await makeWorkerUtils({ pgPool: pool, logger: quietLogger });
    return new GraphileSystem(batched ? "graphile-worker (batched)" : "graphile-worker", db, utils, pool, batched);
  }

  async submitMany(tasks: TaskRequest[]): Promise<string[]> {
    const jobs = await this.utils.addJobs(tasks.map((t) => ({ identifier: "noop", payload: payloadOf(t), ...(t.runAt === undefined ? {} : { runAt: new Date(t.runAt) }) })));
    return jobs.map((j) => String(j.id));
  }

  async submitOne(task: TaskRequest): Promise<string> {
    const job = await this.utils.addJob("noop", payloadOf(task), task.runAt === undefined ? {} : { runAt: new Date(task.runAt) });
    return String(job.id);
  }

  async startConsumers(): Promise<void> {
    this.probe ??= await Probe.start(this.batched ? "graphile-worker-batched" : "graphile-worker", {
      role: "graphile-worker",
      databaseUrl: this.db.url,
      concurrency: CONCURRENCY,
      batched: this.batched,
    });
  }

  /** Finished jobs are deleted; whatever is left is unfinished (or failed, which we count apart). */
  async unfinished(): Promise<number> {
    const res = await this.db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM graphile_worker._private_jobs WHERE last_error IS NULL");
    return res.rows[0]?.n ?? 0;
  }

  async failed(): Promise<number> {
    const res = await this.db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM graphile_worker._private_jobs WHERE last_error IS NOT NULL");
    return res.rows[0]?.n ?? 0;
  }

  async lastFinishedAt(): Promise<number | undefined> {
    return undefined;
  }

  assertAlive(): void {
    this.probe?.assertAlive();
  }

  processes(): WatchedProcess[] {
    return this.probe ? [{ label: `${this.label} runner`, pid: this.probe.pid }] : [];
  }

  async close(): Promise<void> {
    await this.probe?.stop();
    await this.utils.release();
    await this.pool.end();
  }
}

const payloadOf = (t: TaskRequest) => (t.ref === undefined ? {} : { ref: t.ref });

/** Probe side: the graphile-worker runner. */
export async function runGraphileWorker(config: { databaseUrl: string; concurrency: number; batched: boolean }, recorder: Recorder): Promise<() => Promise<void>> {
  const runner = await run({
    connectionString: config.databaseUrl,
    concurrency: config.concurrency,
    maxPoolSize: config.concurrency + 2,
    noHandleSignals: true,
    logger: quietLogger,
    taskList: {
      noop: async (payload, helpers) => {
        recorder.start(String(helpers.job.id), refOf(payload));
      },
    },
    ...(config.batched ? { preset: { worker: { localQueue: { size: LOCAL_QUEUE }, completeJobBatchDelay: 0, failJobBatchDelay: 0 } } } : {}),
  });
  runner.events.on("job:success", () => recorder.completed());
  recorder.ready();
  return () => runner.stop();
}
