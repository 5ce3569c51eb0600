import { randomUUID } from "node:crypto";
import { WeightedFairPicker, type FairCandidate } from "@tasklane/core";
import { startAttemptsByIds, type StartedAttempt } from "@tasklane/db";
import type { TaskJobData } from "@tasklane/queue";
import { Worker, type Job } from "bullmq";
import type { WorkerContext } from "../context.js";
import { ActiveQueues } from "./active-queues.js";

/** Seconds a PUSH lease outlives the request timeout before the attempt is presumed dead. */
const LEASE_GRACE_SECONDS = 15;
const MAX_FETCH_BATCH = 50;
const IDLE_POLL_MS = 1000;
const WORKER_IDLE_CLOSE_MS = 60_000;

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
  private readonly runningByQueue = new Map<string, number>();
  private readonly runningByTenant = new Map<string, number>();
  private readonly active: ActiveQueues;
  private inFlight = 0;
  private stopped = false;
  private wake: (() => void) | undefined;
  private loopDone: Promise<void> | undefined;
  private lastRefresh = 0;

  constructor(
    private readonly ctx: WorkerContext,
    private readonly run: (started: StartedAttempt) => Promise<void>,
  ) {
    this.active = new ActiveQueues(ctx.redis, ctx.keys);
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
        const free = this.ctx.env.WORKER_CONCURRENCY - this.inFlight;
        const jobs = free > 0 ? await this.collect(Math.min(free, MAX_FETCH_BATCH)) : [];
        if (jobs.length > 0) {
          await this.startAll(jobs);
          continue;
        }
        await this.sleep(free > 0 ? this.active.msUntilNextDue(Date.now(), IDLE_POLL_MS) : IDLE_POLL_MS);
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

  /** Fetch up to n jobs, one fair pick at a time. */
  private async collect(n: number): Promise<{ name: string; job: Job<TaskJobData> }[]> {
    const out: { name: string; job: Job<TaskJobData> }[] = [];
    const reserved = new Map<string, number>();
    const reservedTenant = new Map<string, number>();
    while (out.length < n) {
      const byTenant = new Map<string, { weight: number; queues: string[] }>();
      for (const name of this.active.ready(Date.now())) {
        const parsed = this.ctx.keys.parseBullQueueName(name);
        const info = parsed && this.ctx.directory.get(parsed.queueId);
        if (!parsed || !info || info.paused) continue;
        const queueRunning = (this.runningByQueue.get(parsed.queueId) ?? 0) + (reserved.get(parsed.queueId) ?? 0);
        if (info.concurrency !== null && queueRunning >= info.concurrency) continue;
        const tenantRunning = (this.runningByTenant.get(info.tenantId) ?? 0) + (reservedTenant.get(info.tenantId) ?? 0);
        if (info.tenantMaxConcurrency !== null && tenantRunning >= info.tenantMaxConcurrency) continue;
        const entry = byTenant.get(info.tenantId) ?? { weight: info.tenantWeight, queues: [] };
        entry.queues.push(name);
        byTenant.set(info.tenantId, entry);
      }
      const candidates: FairCandidate[] = [...byTenant].map(([tenantId, e]) => ({ tenantId, weight: e.weight }));
      const tenantId = this.picker.pick(candidates);
      if (!tenantId) break;
      const queues = (byTenant.get(tenantId) as { queues: string[] }).queues;
      const name = queues[Math.floor(Math.random() * queues.length)] as string;
      const job = await this.fetchOne(name);
      if (!job) {
        await this.active.markEmpty(name);
        continue;
      }
      out.push({ name, job });
      reserved.set(job.data.queueId, (reserved.get(job.data.queueId) ?? 0) + 1);
      reservedTenant.set(job.data.tenantId, (reservedTenant.get(job.data.tenantId) ?? 0) + 1);
    }
    return out;
  }

  private async fetchOne(name: string): Promise<Job<TaskJobData> | undefined> {
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
    const token = randomUUID();
    const job = (await entry.worker.getNextJob(token, { block: false })) as Job<TaskJobData> | undefined;
    if (!job) return undefined;
    await job.moveToCompleted(null, token, false);
    return job;
  }

  private async startAll(jobs: { name: string; job: Job<TaskJobData> }[]): Promise<void> {
    const started = await startAttemptsByIds(
      this.ctx.db,
      jobs.map((j) => j.job.data.taskId),
      { workerId: this.ctx.workerId, leaseMs: (timeout) => (timeout + LEASE_GRACE_SECONDS) * 1000, actor: this.ctx.workerId },
    );
    for (const attempt of started) {
      this.inFlight++;
      this.bump(attempt.task.queueId, attempt.task.tenantId, 1);
      void this.run(attempt).finally(() => {
        this.inFlight--;
        this.bump(attempt.task.queueId, attempt.task.tenantId, -1);
        this.wake?.();
      });
    }
  }

  private bump(queueId: string, tenantId: string, delta: number): void {
    this.runningByQueue.set(queueId, (this.runningByQueue.get(queueId) ?? 0) + delta);
    this.runningByTenant.set(tenantId, (this.runningByTenant.get(tenantId) ?? 0) + delta);
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
