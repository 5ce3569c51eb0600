import { randomUUID } from "node:crypto";
import { WeightedFairPicker, type FairCandidate } from "@tasklane/core";
import { startAttemptsByIds, type StartedAttempt } from "@tasklane/db";
import { FleetLimits, TakenJobs, type TaskJobData } from "@tasklane/queue";
import { Worker, type Job } from "bullmq";
import type { WorkerContext } from "../context.js";
import { ActiveQueues } from "./active-queues.js";

/** Seconds a PUSH lease outlives the request timeout before the attempt is presumed dead. */
const LEASE_GRACE_SECONDS = 15;
const MAX_FETCH_BATCH = 50;
/** The first wave of concurrent fetches in a collect round after one that came up short (then 2x per fully successful wave). */
const INITIAL_FETCH_WAVE = 4;
const MAX_FETCH_WAVES = 8;
/** How long a queue at its concurrency cap is left alone before asking again. */
const CAPPED_RETRY_MS = 25;
/** A slot is first held briefly (fetch + start); once the task's timeout is known it lives as long as the lease. */
const FETCH_HOLD_MS = 30_000;
const IDLE_POLL_MS = 1000;
/**
 * Start statements in flight at once. One lets the next batch be fetched from
 * Redis while the last one starts in Postgres; strictly alternating the two
 * left each idle half the time (fairness waits grew with the cycle).
 */
const MAX_STARTS_IN_FLIGHT = 2;
const START_FAILURE_BACKOFF_MS = 500;
const WORKER_IDLE_CLOSE_MS = 60_000;

interface Fetched {
  name: string;
  job: Job<TaskJobData>;
  slotId: string;
}

/**
 * Pulls jobs from many tenant queues with weighted fair queueing between
 * tenants, then starts them in Postgres in one statement. Jobs are removed
 * from Redis before the Postgres start: a crash in between leaves a QUEUED
 * task without a job, which the reconciler re-adds. (The other order would
 * leave a job locked in BullMQ's active list that nobody ever reclaims.)
 */
export class FairFetcher {
  private readonly picker = new WeightedFairPicker();
  private readonly workers = new Map<string, { worker: Worker<TaskJobData>; lastUsed: number }>();
  private readonly active: ActiveQueues;
  private readonly limits: FleetLimits;
  private readonly taken: TakenJobs;
  private inFlight = 0;
  /** Jobs fetched and out of Redis whose start statement has not returned yet: their slots are taken. */
  private starting = 0;
  private readonly starts = new Set<Promise<void>>();
  private backoffUntil = 0;
  private stopped = false;
  private wake: (() => void) | undefined;
  private loopDone: Promise<void> | undefined;
  private lastRefresh = 0;
  /**
   * Where the next collect round starts: as many fetches as the last round
   * found jobs. Behind a backlog that is a full batch in one Redis round trip
   * instead of a doubling series of four (collecting 50 jobs took 40–80 ms on
   * a loaded machine, and the start statements waited for it); after a lean
   * round it is back to a few probing fetches.
   */
  private firstWave = INITIAL_FETCH_WAVE;

  constructor(
    private readonly ctx: WorkerContext,
    private readonly run: (started: StartedAttempt) => Promise<void>,
  ) {
    this.active = new ActiveQueues(ctx.redis, ctx.keys);
    this.limits = new FleetLimits(ctx.redis, ctx.keys);
    this.taken = new TakenJobs(ctx.redis, ctx.keys);
  }

  start(): void {
    this.loopDone = this.loop();
  }

  /** A doorbell: the named queue just received work. */
  ring(name: string): void {
    this.active.ring(name);
    this.wake?.();
  }

  get running(): number {
    return this.inFlight;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.loopDone;
    await Promise.all(this.starts);
    await Promise.all([...this.workers.values()].map((w) => w.worker.close(true)));
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      try {
        const now = Date.now();
        if (now - this.lastRefresh >= IDLE_POLL_MS) {
          this.lastRefresh = now;
          await this.active.refresh();
          this.closeIdleWorkers(now);
        }
        if (now < this.backoffUntil) {
          await this.sleep(this.backoffUntil - now);
          continue;
        }
        const free = this.ctx.env.WORKER_CONCURRENCY - this.inFlight - this.starting;
        const canStart = this.starts.size < MAX_STARTS_IN_FLIGHT;
        const jobs = free > 0 && canStart ? await this.collect(Math.min(free, MAX_FETCH_BATCH)) : [];
        if (jobs.length > 0) {
          this.startInBackground(jobs);
          continue;
        }
        // Woken by a finished attempt, a finished start or a doorbell.
        await this.sleep(free > 0 && canStart ? this.active.msUntilNextDue(Date.now(), IDLE_POLL_MS) : IDLE_POLL_MS);
      } catch (error) {
        this.ctx.log.error({ err: error }, "fetch loop failed; backing off");
        await this.sleep(500);
      }
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    }).then(() => {
      this.wake = undefined;
    });
  }

  /**
   * Fetch up to n jobs. Targets are chosen one fair pick at a time (weighted
   * fair queueing between tenants, then a random ready queue of the tenant),
   * but fetched concurrently in waves, so a batch costs a few Redis round trips
   * instead of one per job. Waves start at what the last round found (see
   * firstWave) and double while every fetch of a wave succeeds: a nearly empty
   * queue wastes a handful of calls, a deep one is drained in one or two
   * waves. A queue that came up empty or at a limit leaves the ready set, so
   * the next wave goes on with the others: a tenant trickling in one task at a
   * time must not cut every batch of a tenant with a deep backlog short.
   * Before each fetch the queue's fleet-wide limits are checked in Redis
   * (tenant and queue concurrency slots, start-rate token); a queue at a limit
   * is skipped for a moment.
   */
  private async collect(n: number): Promise<Fetched[]> {
    const out: Fetched[] = [];
    let wave = this.firstWave;
    for (let round = 0; round < MAX_FETCH_WAVES && out.length < n; round++) {
      const targets = this.pickTargets(Math.min(wave, n - out.length));
      if (targets.length === 0) break;
      // One lock token per wave: the wave's jobs are then dropped from Redis with one call per queue.
      const token = randomUUID();
      const fetched = await Promise.all(targets.map((name) => this.fetchWithinLimits(name, token)));
      await this.dropTaken(fetched, token);
      let hits = 0;
      for (const f of fetched) {
        if (f) {
          out.push(f);
          hits++;
        }
      }
      if (hits === 0) break;
      if (hits === targets.length) wave *= 2;
    }
    this.firstWave = Math.max(INITIAL_FETCH_WAVE, Math.min(out.length, MAX_FETCH_BATCH));
    return out;
  }

  /** Up to n fair picks among the queues that are ready now (the same queue may come up more than once). */
  private pickTargets(n: number): string[] {
    const byTenant = new Map<string, { weight: number; queues: string[] }>();
    for (const name of this.active.ready(Date.now())) {
      const parsed = this.ctx.keys.parseBullQueueName(name);
      const info = parsed && this.ctx.directory.get(parsed.queueId);
      if (!parsed || !info || info.paused) continue;
      const entry = byTenant.get(info.tenantId) ?? { weight: info.tenantWeight, queues: [] };
      entry.queues.push(name);
      byTenant.set(info.tenantId, entry);
    }
    const candidates: FairCandidate[] = [...byTenant].map(([tenantId, e]) => ({ tenantId, weight: e.weight }));
    const targets: string[] = [];
    while (targets.length < n) {
      const tenantId = this.picker.pick(candidates);
      if (!tenantId) break;
      const queues = (byTenant.get(tenantId) as { queues: string[] }).queues;
      targets.push(queues[Math.floor(Math.random() * queues.length)] as string);
    }
    return targets;
  }

  /** The wave's jobs leave Redis before their tasks start in Postgres (why: see the class comment). */
  private async dropTaken(fetched: (Fetched | null)[], token: string): Promise<void> {
    const byQueue = new Map<string, string[]>();
    for (const f of fetched) {
      if (!f) continue;
      const ids = byQueue.get(f.name) ?? [];
      ids.push(f.job.id as string);
      byQueue.set(f.name, ids);
    }
    await Promise.all([...byQueue].map(([name, ids]) => this.taken.drop(name, token, ids)));
  }

  private async fetchWithinLimits(name: string, token: string): Promise<Fetched | null> {
    const { queueId } = this.ctx.keys.parseBullQueueName(name) as { queueId: string };
    const info = this.ctx.directory.get(queueId);
    if (!info) return null;
    const slot = await this.limits.acquire(info.tenantId, queueId, { tenant: info.tenantMaxConcurrency, queue: info.concurrency }, FETCH_HOLD_MS);
    if (!slot.acquired) {
      this.active.defer(name, Date.now() + CAPPED_RETRY_MS);
      return null;
    }
    if (info.rateLimit) {
      const waitMs = await this.limits.takeStartToken(info.tenantId, queueId, info.rateLimit.perSecond, info.rateLimit.burst);
      if (waitMs > 0) {
        await this.limits.release(info.tenantId, queueId, slot.slotId);
        this.active.defer(name, Date.now() + waitMs);
        return null;
      }
    }
    const rings = this.active.ringsHeard(name);
    const job = await this.fetchOne(name, token);
    if (!job) {
      await this.limits.release(info.tenantId, queueId, slot.slotId);
      await this.active.markEmpty(name, rings);
      return null;
    }
    return { name, job, slotId: slot.slotId };
  }

  private async fetchOne(name: string, token: string): Promise<Job<TaskJobData> | undefined> {
    let entry = this.workers.get(name);
    if (!entry) {
      const worker = new Worker<TaskJobData>(name, null, {
        connection: this.ctx.redis,
        prefix: this.ctx.keys.prefix,
        autorun: false,
      });
      worker.on("error", (error) => this.ctx.log.warn({ err: error, queue: name }, "BullMQ worker error"));
      entry = { worker, lastUsed: 0 };
      this.workers.set(name, entry);
    }
    entry.lastUsed = Date.now();
    return (await entry.worker.getNextJob(token, { block: false })) as Job<TaskJobData> | undefined;
  }

  private startInBackground(jobs: Fetched[]): void {
    this.starting += jobs.length;
    const start: Promise<void> = this.startAll(jobs)
      .catch((error: unknown) => {
        // The jobs are out of Redis already: the reconciler re-adds their tasks, which are still waiting.
        this.ctx.log.error({ err: error, jobs: jobs.length }, "could not start fetched tasks; backing off");
        this.backoffUntil = Date.now() + START_FAILURE_BACKOFF_MS;
      })
      .finally(() => {
        this.starting -= jobs.length;
        this.starts.delete(start);
        this.wake?.();
      });
    this.starts.add(start);
  }

  private async startAll(jobs: Fetched[]): Promise<void> {
    const started = await startAttemptsByIds(
      this.ctx.db,
      jobs.map((j) => j.job.data.taskId),
      { workerId: this.ctx.workerId, leaseMs: { timeoutPlusMs: LEASE_GRACE_SECONDS * 1000 }, actor: this.ctx.workerId },
    );
    const startedIds = new Set(started.map((a) => a.task.id));
    // Jobs whose task was no longer runnable (cancelled, ordering key busy) give their slot back.
    await Promise.all(
      jobs.filter((j) => !startedIds.has(j.job.data.taskId)).map((j) => this.limits.release(j.job.data.tenantId, j.job.data.queueId, j.slotId)),
    );
    const slotOf = new Map(jobs.map((j) => [j.job.data.taskId, j.slotId]));
    for (const attempt of started) {
      this.inFlight++;
      const slotId = slotOf.get(attempt.task.id) ?? "";
      void this.limits
        .extend(attempt.task.tenantId, attempt.task.queueId, slotId, (attempt.task.timeoutSeconds + LEASE_GRACE_SECONDS) * 1000)
        // Without Redis the slot just keeps its short expiry; the attempt still runs.
        .catch(() => undefined)
        .then(() => this.run(attempt))
        .finally(() => this.limits.release(attempt.task.tenantId, attempt.task.queueId, slotId))
        .catch((error: unknown) => this.ctx.log.warn({ err: error }, "could not release a concurrency slot; it expires with the lease"))
        .finally(() => {
          this.inFlight--;
          this.wake?.();
        });
    }
  }

  private closeIdleWorkers(now: number): void {
    for (const [name, entry] of this.workers) {
      if (now - entry.lastUsed > WORKER_IDLE_CLOSE_MS) {
        this.workers.delete(name);
        void entry.worker.close(true).catch(() => undefined);
      }
    }
  }
}
