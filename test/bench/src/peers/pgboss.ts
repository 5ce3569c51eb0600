/**
 * pg-boss 10 (11+ needs Node 22): send / insert in the harness, work() with a
 * no-op batch handler in its own process. pg-boss polls (at least every
 * 0.5 s): it fetches `batchSize` jobs per poll per worker, and waits out the
 * rest of the interval even after a full batch, so workers × batchSize / 0.5 s
 * caps its throughput. batchSize is set high enough that the cap (16,000/s)
 * is not what the bench measures (at 200 it was: exactly 1,600/s).
 */
import { randomUUID } from "node:crypto";
import PgBoss from "pg-boss";
import { Probe } from "../lib/probe.js";
import { refOf } from "../lib/probe-protocol.js";
import type { Recorder } from "../lib/recorder.js";
import type { BenchDatabase } from "../lib/postgres.js";
import type { BenchSystem, TaskRequest, WatchedProcess } from "../lib/system.js";

const QUEUE = "bench";
const SETTINGS = { workers: 4, batchSize: 2000, pollingIntervalSeconds: 0.5 } as const;
export const PGBOSS_SETTINGS = `${SETTINGS.workers} work() loops, batchSize ${SETTINGS.batchSize}, pollingIntervalSeconds ${SETTINGS.pollingIntervalSeconds} (its minimum)`;

const bossOptions = (url: string): PgBoss.ConstructorOptions => ({ connectionString: url, max: 6, schedule: false, supervise: false });

export class PgBossSystem implements BenchSystem {
  readonly label = "pg-boss";
  probe: Probe | undefined;

  private constructor(
    private readonly db: BenchDatabase,
    private readonly boss: PgBoss,
  ) {}

  get database(): BenchDatabase {
    return this.db;
  }

  static async create(db: BenchDatabase): Promise<PgBossSystem> {
    const boss = new PgBoss(bossOptions(db.url));
    boss.on("error", (error) => process.stderr.write(`[pg-boss] ${error.message}\n`));
    await boss.start();
    await boss.createQueue(QUEUE);
    return new PgBossSystem(db, boss);
  }

  async submitMany(tasks: TaskRequest[]): Promise<string[]> {
    const jobs = tasks.map((t) => ({ id: randomUUID(), name: QUEUE, data: payloadOf(t), ...(t.runAt === undefined ? {} : { startAfter: new Date(t.runAt) }) }));
    await this.boss.insert(jobs);
    return jobs.map((j) => j.id);
  }

  async submitOne(task: TaskRequest): Promise<string> {
    const id = await this.boss.send(QUEUE, payloadOf(task), task.runAt === undefined ? {} : { startAfter: new Date(task.runAt) });
    if (id === null) throw new Error("pg-boss refused the job");
    return id;
  }

  async startConsumers(): Promise<void> {
    this.probe ??= await Probe.start("pgboss-worker", { role: "pgboss-worker", databaseUrl: this.db.url, queue: QUEUE, ...SETTINGS });
  }

  async unfinished(): Promise<number> {
    const res = await this.db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM pgboss.job WHERE name = $1 AND state IN ('created','retry','active')", [QUEUE]);
    return res.rows[0]?.n ?? 0;
  }

  async failed(): Promise<number> {
    const res = await this.db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM pgboss.job WHERE name = $1 AND state = 'failed'", [QUEUE]);
    return res.rows[0]?.n ?? 0;
  }

  async lastFinishedAt(): Promise<number | undefined> {
    const res = await this.db.pool.query<{ at: Date | null }>("SELECT max(completed_on) AS at FROM pgboss.job WHERE name = $1 AND state = 'completed'", [QUEUE]);
    return res.rows[0]?.at?.getTime() ?? undefined;
  }

  assertAlive(): void {
    this.probe?.assertAlive();
  }

  processes(): WatchedProcess[] {
    return this.probe ? [{ label: "pg-boss worker", pid: this.probe.pid }] : [];
  }

  async close(): Promise<void> {
    await this.probe?.stop();
    await this.boss.stop({ graceful: false, wait: true, timeout: 5_000 });
  }
}

const payloadOf = (t: TaskRequest) => (t.ref === undefined ? {} : { ref: t.ref });

/** Probe side: `workers` pg-boss workers on one queue. */
export async function runPgBossWorker(
  config: { databaseUrl: string; queue: string; workers: number; batchSize: number; pollingIntervalSeconds: number },
  recorder: Recorder,
): Promise<() => Promise<void>> {
  const boss = new PgBoss(bossOptions(config.databaseUrl));
  boss.on("error", (error) => recorder.fail(error));
  await boss.start();
  for (let i = 0; i < config.workers; i++) {
    await boss.work(config.queue, { batchSize: config.batchSize, pollingIntervalSeconds: config.pollingIntervalSeconds }, async (jobs) => {
      for (const job of jobs) recorder.start(job.id, refOf(job.data));
    });
  }
  recorder.ready();
  return () => boss.stop({ graceful: true, wait: true, timeout: 5_000 });
}
