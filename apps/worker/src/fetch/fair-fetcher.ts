import { pickStarts, priorityOfRank, StartBatchCap, WeightedFairPicker, type TenantSlots } from "@tasklane/core";
import { startAttemptsByIds, type DispatchIntent, type PushTaskRecord, type StartedAttempt } from "@tasklane/db";
import { FleetLimits, JobTaker, taskSlotId, type TakenJob } from "@tasklane/queue";
import type { WorkerContext } from "../context.js";
import { ActiveQueues } from "./active-queues.js";

/** Seconds a PUSH lease outlives the request timeout before the attempt is presumed dead. */
const LEASE_GRACE_SECONDS = 15;
/**
 * Tasks per start statement, at most: 50 while one tenant has work, 25 once
 * several have had some within the last 5 s (StartBatchCap). A start
 * statement costs Postgres ~500 µs of CPU however many tasks it starts and
 * ~25 µs more per task (pg-hot-path: 47 µs a task by 25, 36 by 50, 30 by
 * 100), so bigger is cheaper; but a batch only fills with the slots freed
 * while the last start was out, so above 25 it matters only to a worker with
 * more slots than WORKER_CONCURRENCY's default 100 (s1 PUSH: 6,450 tasks/s at
 * 100 slots by 25, as by 50; at 300 slots 7,470–7,700 by 50, 7,900 by 100).
 * Every task of a batch waits for the whole statement, so a tenant trickling
 * in tasks behind another's backlog waits for one full of the other's tasks
 * (s5, B's p50/p99 wait at 300 slots: 22/47 ms by 50, 33/91 by 100 on one
 * VM; 53–55/126–141 by 50 and 31–33/89 by 25 on a slower one).
 */
const START_BATCH = { alone: 50, shared: 25 };
/** Tenants with work within this long share the worker (a trickling tenant has work only now and then). */
const SHARING_WINDOW_MS = 5_000;
/** The first wave's picks in a collect round after one that came up short (then 2x per fully successful wave). */
const INITIAL_FETCH_WAVE = 4;
const MAX_FETCH_WAVES = 8;
/** How long a queue at its concurrency cap is left alone before asking again. */
const CAPPED_RETRY_MS = 25;
/** A slot is first held briefly (fetch + start); once the task's timeout is known it lives as long as the lease. */
const FETCH_HOLD_MS = 30_000;
const IDLE_POLL_MS = 1000;
/** How often a queue the directory does not know asks for an early reload again. */
const UNKNOWN_REASK_MS = 10_000;
/**
 * Start statements in flight at once. One lets the next batch be fetched from
 * Redis while the last one starts in Postgres; strictly alternating the two
 * left each idle half the time (fairness waits grew with the cycle).
 */
const MAX_STARTS_IN_FLIGHT = 2;
const START_FAILURE_BACKOFF_MS = 500;

/** Slots per tenant, with the tenant's weight. */
type HeldSlots = Map<string, { slots: number; weight: number }>;

interface Fetched {
  job: TakenJob;
  slotId: string;
}

/**
 * Pulls jobs from many tenant queues with weighted fair queueing between
 * tenants, then starts them in Postgres in one statement. Each tenant with
 * work waiting is owed its weighted share of WORKER_CONCURRENCY and starts
 * within it even while others' requests fill the worker (pickStarts): one
 * tenant's slow endpoint cannot stall the others. Each worker process shares
 * its own slots this way, by what it holds and sees waiting. Jobs are taken
 * out of Redis (deleted) before the Postgres start: a crash in between leaves
 * a QUEUED task without a job, which the reconciler re-adds. (The other order
 * would need a lock on each job and a second call to remove it.)
 */
export class FairFetcher {
  private readonly picker = new WeightedFairPicker();
  private readonly batchCap = new StartBatchCap(START_BATCH, SHARING_WINDOW_MS);
  private readonly active: ActiveQueues;
  private readonly limits: FleetLimits;
  private readonly jobs: JobTaker;
  /** Attempts started and not yet finished with: executing, or their outcome being recorded. */
  private inFlight = 0;
  /**
   * Attempts whose request is still out: what WORKER_CONCURRENCY bounds. An
   * attempt leaves as soon as its response is in, not when its outcome is
   * recorded: recording waits up to the completion batch window and a
   * statement, ~15 ms in which a slot did no work, and a tenant trickling in
   * tasks behind another's backlog waited for slots freed that late.
   */
  private executing = 0;
  /** Jobs fetched and out of Redis whose start statement has not returned yet: their slots are taken. */
  private starting = 0;
  /** Per tenant: its jobs starting and its requests out (its part of `starting` + `executing`). */
  private readonly held: HeldSlots = new Map();
  private readonly starts = new Set<Promise<void>>();
  /**
   * Queues that came up short, whose bookkeeping (markDrained) is still on its way to Redis: the jobs
   * taken with it do not wait for it, and the queue is not fetched again until it lands.
   */
  private readonly settling = new Map<string, Promise<void>>();
  private backoffUntil = 0;
  private stopped = false;
  private wake: (() => void) | undefined;
  private loopDone: Promise<void> | undefined;
  private lastRefresh = 0;
  /**
   * Where the next collect round starts: as many picks as the last round
   * found jobs. Behind a backlog that is a full batch in one wave instead of a
   * doubling series from four (each wave is a Redis round trip, and the start
   * statements wait for the collect); after a lean round it is back to a few
   * probing picks.
   */
  private firstWave = INITIAL_FETCH_WAVE;
  /**
   * Queues put off until their next start token, with the rate that said so.
   * A wait at an old rate (20 s at 0.05/s, hours at 0.0001/s) must not
   * outlive a raise or a removal (contract: limit changes apply within 1 s):
   * each directory reload looks at these few and lets a changed one go now.
   */
  private readonly rateDeferred = new Map<string, { queueId: string; rate: { perSecond: number; burst: number } }>();
  /**
   * Queues put off because the directory does not know them (created a
   * moment ago) or has them paused, with when an early reload was last asked
   * for them: the next reload that knows them running lets them go at once.
   */
  private readonly directoryDeferred = new Map<string, { queueId: string; askedAt: number }>();

  constructor(
    private readonly ctx: WorkerContext,
    /** Runs an attempt to its recorded outcome, calling `executed` once its request is over. */
    private readonly run: (started: StartedAttempt<PushTaskRecord>, executed: () => void) => Promise<void>,
  ) {
    this.active = new ActiveQueues(ctx.redis, ctx.keys, ctx.env.WORKER_START_AHEAD_MS);
    this.limits = new FleetLimits(ctx.redis, ctx.keys);
    this.jobs = new JobTaker(ctx.redis, ctx.keys);
    ctx.directory.onChange(() => this.directoryChanged());
  }

  private directoryChanged(): void {
    let freed = false;
    for (const [name, { queueId, rate }] of this.rateDeferred) {
      const now = this.ctx.directory.get(queueId)?.rateLimit ?? null;
      if (now !== null && now.perSecond === rate.perSecond && now.burst === rate.burst) continue;
      this.rateDeferred.delete(name);
      this.active.defer(name, 0);
      freed = true;
    }
    for (const [name, { queueId }] of this.directoryDeferred) {
      const info = this.ctx.directory.get(queueId);
      if (info === undefined || info.paused) continue;
      this.directoryDeferred.delete(name);
      this.active.defer(name, 0);
      freed = true;
    }
    if (freed) this.wake?.();
  }

  start(): void {
    this.loopDone = this.loop();
  }

  /** A doorbell: the named queue just received work, all of it delayed when `dueAt` says from when. */
  ring(name: string, dueAt: number | null = null): void {
    this.active.ring(name, dueAt);
    this.wake?.();
  }

  get running(): number {
    return this.inFlight;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.loopDone;
    await Promise.all([...this.starts, ...this.settling.values()]);
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      try {
        const now = Date.now();
        if (now - this.lastRefresh >= IDLE_POLL_MS) {
          this.lastRefresh = now;
          await this.active.refresh();
        }
        if (now < this.backoffUntil) {
          await this.sleep(this.backoffUntil - now);
          continue;
        }
        const concurrency = this.ctx.env.WORKER_CONCURRENCY;
        // Requests out and outcomes waiting to be recorded stay within twice WORKER_CONCURRENCY: the
        // share a tenant is owed beyond a full worker (pickStarts) is at most one WORKER_CONCURRENCY
        // more, and a slow Postgres holds fetching back instead of piling up completions.
        const room = 2 * concurrency - this.inFlight - this.starting;
        const canStart = this.starts.size < MAX_STARTS_IN_FLIGHT;
        const collected = room > 0 && canStart ? await this.collect(Math.min(room, this.batchCap.at(now))) : null;
        if (collected && collected.jobs.length > 0) {
          this.startInBackground(collected.jobs);
          continue;
        }
        // A drained queue counts as ready until its bookkeeping lands (no wait until its next job): wait for that instead of spinning.
        if (this.settling.size > 0) {
          await Promise.all(this.settling.values());
          continue;
        }
        // Woken by a finished attempt, a finished start or a doorbell (a tenant's first work may be owed a start).
        const mayStart = collected !== null && !collected.slotsTaken;
        await this.sleep(mayStart ? this.active.msUntilNextDue(Date.now(), IDLE_POLL_MS) : IDLE_POLL_MS);
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
   * and each wave takes its picks with one slot call and one take call per
   * queue, all queues at once. Waves start at what the last round found (see
   * firstWave) and double while every pick of a wave got its job: a nearly
   * empty queue wastes a handful of picks, a deep one is drained in one or two
   * waves. A queue that came up short or at a limit leaves the ready set, so
   * the next wave goes on with the others: a tenant trickling in one task at a
   * time must not cut every batch of a tenant with a deep backlog short.
   * Before each take the queue's fleet-wide limits are checked in Redis
   * (tenant and queue concurrency slots, start-rate tokens); a queue at a
   * limit is skipped for a moment. `slotsTaken`: tenants had work waiting
   * and none may start more (nothing for a doorbell of theirs to change).
   */
  private async collect(n: number): Promise<{ jobs: Fetched[]; slotsTaken: boolean }> {
    const out: Fetched[] = [];
    /** Jobs of this round per tenant: their slots are taken for the next wave's picks. */
    const taken: HeldSlots = new Map();
    let wave = this.firstWave;
    let slotsTaken = false;
    for (let round = 0; round < MAX_FETCH_WAVES && out.length < n; round++) {
      const { targets, waiting } = this.pickTargets(Math.min(wave, n - out.length), taken);
      if (targets.length === 0) {
        slotsTaken = round === 0 && waiting;
        break;
      }
      const picksPerQueue = new Map<string, number>();
      for (const name of targets) picksPerQueue.set(name, (picksPerQueue.get(name) ?? 0) + 1);
      const fetched = await Promise.all([...picksPerQueue].map(([name, picks]) => this.takeWithinLimits(name, picks)));
      const hits = fetched.reduce((sum, jobs) => sum + jobs.length, 0);
      for (const jobs of fetched) {
        for (const j of jobs) this.hold(taken, j.job.data.tenantId, j.job.data.queueId, 1);
        out.push(...jobs);
      }
      if (hits === 0) break;
      if (hits === targets.length) wave *= 2;
    }
    this.firstWave = Math.max(INITIAL_FETCH_WAVE, out.length);
    return { jobs: out, slotsTaken };
  }

  /**
   * Up to n picks among the queues that are ready now (the same queue may
   * come up more than once): tenants by their slot shares and weighted fair
   * queueing (pickStarts), then a random ready queue of the tenant. A tenant
   * counts as waiting while it has a ready queue: one that just came up
   * short is not (it is settling), and neither is one at a limit (deferred).
   */
  private pickTargets(n: number, taken: HeldSlots): { targets: string[]; waiting: boolean } {
    const byTenant = new Map<string, { weight: number; queues: string[] }>();
    const now = Date.now();
    for (const name of this.active.ready(now)) {
      if (this.settling.has(name)) continue;
      const parsed = this.ctx.keys.parseBullQueueName(name);
      const info = parsed && this.ctx.directory.get(parsed.queueId);
      if (!parsed || !info || info.paused) {
        // Its jobs stay until it is resumed (or the directory learns of it): looked at again in a while, not
        // on every turn of the loop (it counted as due now, and the loop spun: ~900 looks a second).
        this.active.defer(name, now + IDLE_POLL_MS);
        if (parsed) this.awaitDirectory(name, parsed.queueId, info === undefined, now);
        continue;
      }
      const entry = byTenant.get(info.tenantId) ?? { weight: info.tenantWeight, queues: [] };
      entry.queues.push(name);
      byTenant.set(info.tenantId, entry);
    }
    this.batchCap.observe(byTenant.keys(), now);
    const tenants = new Map<string, TenantSlots>();
    for (const [tenantId, e] of byTenant) tenants.set(tenantId, { tenantId, weight: e.weight, held: 0, waiting: true });
    // Tenants holding slots with nothing waiting count too: their slots are taken, and each share is a part of the worker.
    for (const holders of [this.held, taken]) {
      for (const [tenantId, h] of holders) {
        const t = tenants.get(tenantId);
        if (t) t.held += h.slots;
        else tenants.set(tenantId, { tenantId, weight: h.weight, held: h.slots, waiting: false });
      }
    }
    const targets: string[] = [];
    for (const tenantId of pickStarts(this.picker, this.ctx.env.WORKER_CONCURRENCY, [...tenants.values()], n)) {
      const queues = (byTenant.get(tenantId) as { queues: string[] }).queues;
      targets.push(queues[Math.floor(Math.random() * queues.length)] as string);
    }
    return { targets, waiting: byTenant.size > 0 };
  }

  /**
   * An unknown queue asks for an early directory reload: its first task waited
   * up to a second for the periodic one. Asked again only after
   * UNKNOWN_REASK_MS, so a queue that stays unknown (a PULL queue with jobs
   * left from when it was PUSH) costs a reload that often, no more.
   */
  private awaitDirectory(name: string, queueId: string, unknown: boolean, now: number): void {
    const entry = this.directoryDeferred.get(name);
    if (!unknown) {
      if (!entry) this.directoryDeferred.set(name, { queueId, askedAt: 0 });
      return;
    }
    if (entry && now - entry.askedAt < UNKNOWN_REASK_MS) return;
    this.directoryDeferred.set(name, { queueId, askedAt: now });
    this.ctx.directory.requestReload();
  }

  /** A tenant's slots in `held` change by `delta` (its weight is read when it first holds one). */
  private hold(held: HeldSlots, tenantId: string, queueId: string, delta: number): void {
    const entry = held.get(tenantId);
    if (entry) {
      entry.slots += delta;
      if (entry.slots <= 0) held.delete(tenantId);
      return;
    }
    if (delta > 0) held.set(tenantId, { slots: delta, weight: this.ctx.directory.get(queueId)?.tenantWeight ?? 1 });
  }

  /**
   * Up to `want` jobs of one queue, each with a concurrency slot (and a start
   * token when the queue is rate limited). When the take drained the queue,
   * its reply says when the next delayed job is due; with none, the queue
   * leaves the active set, one more Redis round trip (two in a cluster). That
   * bookkeeping runs behind: these jobs, and the other queues' jobs of the same
   * wave, start without waiting for it (a tenant trickling in tasks drains its
   * queue on every fetch).
   */
  private async takeWithinLimits(name: string, want: number): Promise<Fetched[]> {
    const { queueId } = this.ctx.keys.parseBullQueueName(name) as { queueId: string };
    const info = this.ctx.directory.get(queueId);
    if (!info) return [];
    const { tenantId } = info;
    const slots = await this.limits.acquire(tenantId, queueId, { tenant: info.tenantMaxConcurrency, queue: info.concurrency }, FETCH_HOLD_MS, want);
    if (slots.length === 0) {
      this.active.defer(name, Date.now() + CAPPED_RETRY_MS);
      return [];
    }
    if (info.rateLimit) {
      const { granted, waitMs } = await this.limits.takeStartTokens(tenantId, queueId, info.rateLimit.perSecond, info.rateLimit.burst, slots.length);
      await this.limits.release(tenantId, queueId, ...slots.splice(granted));
      if (granted === 0) {
        this.active.defer(name, Date.now() + waitMs);
        this.rateDeferred.set(name, { queueId, rate: info.rateLimit });
        return [];
      }
      this.rateDeferred.delete(name);
    }
    const rings = this.active.ringsHeard(name);
    const { jobs, drained, nextDelayedAt } = await this.jobs.take(name, slots.length, Date.now() + this.ctx.env.WORKER_START_AHEAD_MS);
    if (drained) this.settleDrained(name, rings, nextDelayedAt);
    if (jobs.length < slots.length) {
      // Start tokens go back with the slots: a take that came up short (a trickle of single tasks
      // fetched by waves of several picks) spent the rest, and the burst was gone when a batch came.
      const unused = slots.length - jobs.length;
      await Promise.all([
        this.limits.release(tenantId, queueId, ...slots.splice(jobs.length)),
        info.rateLimit ? this.limits.returnStartTokens(tenantId, queueId, info.rateLimit.perSecond, info.rateLimit.burst, unused) : undefined,
      ]);
    }
    return jobs.map((job, i) => ({ job, slotId: slots[i] as string }));
  }

  /**
   * Jobs taken whose start statement failed (Postgres unreachable or failing): their tasks are
   * still waiting, but their jobs are out of Redis, where only the reconciler's sweep would find
   * them, up to a pass later (RECONCILE_INTERVAL_SECONDS, then 2,000 tasks a second). They go back
   * due after the back-off, under the same job ids (a repeat of the sweep's is harmless), with
   * their slots and start tokens, so their tasks run as soon as Postgres answers. Should Redis
   * refuse too, the sweep is left to find them.
   */
  private async putBack(jobs: Fetched[]): Promise<void> {
    const runAt = new Date(Date.now() + START_FAILURE_BACKOFF_MS);
    const intents: DispatchIntent[] = jobs.map(({ job: { data } }) => ({
      taskId: data.taskId,
      tenantId: data.tenantId,
      queueId: data.queueId,
      dispatchGeneration: data.dispatchGeneration,
      priority: priorityOfRank(data.lane ?? 2),
      runAt,
    }));
    try {
      await Promise.all([
        this.ctx.dispatcher.dispatch(intents),
        ...jobs.map((j) => this.limits.release(j.job.data.tenantId, j.job.data.queueId, j.slotId)),
        ...this.returnTokens(jobs),
      ]);
    } catch (error: unknown) {
      this.ctx.log.warn({ err: error, jobs: jobs.length }, "could not put taken jobs back; the reconciler's sweep re-adds them");
    }
  }

  /** One refund per rate-limited queue among jobs that did not start. */
  private returnTokens(refused: Fetched[]): Promise<void>[] {
    if (refused.length === 0) return [];
    const perQueue = new Map<string, { tenantId: string; n: number }>();
    for (const { job } of refused) {
      const entry = perQueue.get(job.data.queueId);
      if (entry) entry.n++;
      else perQueue.set(job.data.queueId, { tenantId: job.data.tenantId, n: 1 });
    }
    const out: Promise<void>[] = [];
    for (const [queueId, { tenantId, n }] of perQueue) {
      const rate = this.ctx.directory.get(queueId)?.rateLimit;
      if (rate) out.push(this.limits.returnStartTokens(tenantId, queueId, rate.perSecond, rate.burst, n));
    }
    return out;
  }

  private settleDrained(name: string, ringsBefore: number, nextDelayedAt: number | null): void {
    const settled: Promise<void> = this.active
      .markDrained(name, ringsBefore, nextDelayedAt)
      .catch((error: unknown) => this.ctx.log.warn({ err: error, queue: name }, "could not record a drained queue"))
      .finally(() => this.settling.delete(name));
    this.settling.set(name, settled);
  }

  private startInBackground(jobs: Fetched[]): void {
    this.starting += jobs.length;
    for (const j of jobs) this.hold(this.held, j.job.data.tenantId, j.job.data.queueId, 1);
    const start: Promise<void> = this.startAll(jobs)
      .catch(async (error: unknown) => {
        this.ctx.log.error({ err: error, jobs: jobs.length }, "could not start fetched tasks; putting them back and backing off");
        this.backoffUntil = Date.now() + START_FAILURE_BACKOFF_MS;
        await this.putBack(jobs);
      })
      .finally(() => {
        this.starting -= jobs.length;
        for (const j of jobs) this.hold(this.held, j.job.data.tenantId, j.job.data.queueId, -1);
        this.starts.delete(start);
        this.wake?.();
      });
    this.starts.add(start);
  }

  private async startAll(jobs: Fetched[]): Promise<void> {
    const started = await startAttemptsByIds(
      this.ctx.db,
      jobs.map((j) => j.job.data.taskId),
      {
        workerId: this.ctx.workerId,
        leaseMs: { timeoutPlusMs: LEASE_GRACE_SECONDS * 1000 },
        actor: `worker:${this.ctx.workerId}`,
        // Jobs were taken by this process's clock, the statement goes by the database's: twice the
        // look-ahead, so a clock up to that far ahead of the database's does not get tasks refused
        // whose jobs are already out of Redis (they would wait for the reconciler's sweep).
        startAheadMs: 2 * this.ctx.env.WORKER_START_AHEAD_MS,
      },
    );
    const receivedAt = performance.now();
    for (const a of started) if (a.startInMs > 0) this.ctx.serverClock.observe(a.task.runAt.getTime(), a.startInMs, receivedAt);
    const startedIds = new Set(started.map((a) => a.task.id));
    // Jobs whose task was no longer runnable (cancelled, ordering key busy, queue paused) give their slot
    // back, and their start token where the queue has a rate: nothing started.
    const refused = jobs.filter((j) => !startedIds.has(j.job.data.taskId));
    await Promise.all([...refused.map((j) => this.limits.release(j.job.data.tenantId, j.job.data.queueId, j.slotId)), ...this.returnTokens(refused)]);
    const slotOf = new Map(jobs.map((j) => [j.job.data.taskId, j.slotId]));
    for (const attempt of started) {
      this.inFlight++;
      this.executing++;
      const { tenantId, queueId } = attempt.task;
      this.hold(this.held, tenantId, queueId, 1);
      const slotId = slotOf.get(attempt.task.id) ?? "";
      let requestOut = true;
      // The fleet-wide slot goes back with the local one: queue and tenant concurrency
      // bound the requests an endpoint is serving, and this one is over.
      const executed = () => {
        if (!requestOut) return;
        requestOut = false;
        this.executing--;
        this.hold(this.held, tenantId, queueId, -1);
        // Under both names: the claim below renames the slot, and may not have landed yet if Redis lost it.
        this.limits
          .release(tenantId, queueId, slotId, ...(slotId ? [taskSlotId(attempt.task.id)] : []))
          .catch((error: unknown) => this.ctx.log.warn({ err: error }, "could not release a concurrency slot; it expires with the lease"));
        this.wake?.();
      };
      // The request does not wait for the claim: the slot's fetch hold outlasts a Redis round trip,
      // and a release issued later on the same connection lands after it.
      // Without Redis the slot just keeps its short expiry; the attempt still runs.
      void this.limits
        .claim(tenantId, queueId, slotId, attempt.task.id, (attempt.task.timeoutSeconds + LEASE_GRACE_SECONDS) * 1000)
        .catch(() => undefined);
      void this.run(attempt, executed)
        .catch((error: unknown) => this.ctx.log.error({ err: error, taskId: attempt.task.id }, "attempt failed outside its handler"))
        .finally(() => {
          executed();
          this.inFlight--;
          this.wake?.();
        });
    }
  }
}
