import { randomUUID } from "node:crypto";
import { IdPrefix, newId } from "@tasklane/core";
import { listHeldSlots, listTasksThatBelongInRedis, type DispatchIntent } from "@tasklane/db";
import { FleetLimits, MissingJobFinder, groupByBullQueue, jobIdFor } from "@tasklane/queue";
import type { SchedulerContext } from "../context.js";

const PAGE = 2000;
const REBUILD_IN_FLIGHT = 3;

/**
 * Redis holds nothing that Postgres cannot rebuild. Two checks:
 * - the epoch key vanished (FLUSHALL, a restarted Redis without persistence):
 *   put back the concurrency slots of the PUSH attempts still running, then
 *   re-add every task that belongs in Redis, page by page;
 * - otherwise, a rolling sweep finds individual jobs that went missing
 *   (eviction, a crash between claim and enqueue) with a script call per queue,
 *   jobs a dead worker left active without a lock, and jobs whose hash
 *   outlived their entry in the queue's sets, and puts the page's queues
 *   back in the active set workers fetch from. It checks one page per
 *   tick and starts a new pass at most every RECONCILE_INTERVAL_SECONDS, so
 *   a deep backlog costs a steady trickle of checks rather than a burst of
 *   hundreds of thousands that stalls every other process on the machine.
 * Re-adding is harmless: the job id is (task id, dispatch generation).
 */
export function createReconciler(ctx: SchedulerContext) {
  const finder = new MissingJobFinder(ctx.redis, ctx.keys);
  const limits = new FleetLimits(ctx.redis, ctx.keys);
  let lastSweep = 0;
  /** Where the current sweep pass has got to (keyset on task id); undefined between passes. */
  let sweepAfter: string | undefined;
  /**
   * Where the current pass ends: an id drawn when it started. Task ids are
   * time-ordered (UUIDv7), so tasks created since are left to the next pass;
   * unbounded, a pass behind a stream of new tasks faster than a page a tick
   * chased them for as long as the stream lasted, one page every second.
   */
  let sweepUpTo: string | null = null;

  async function forEachPage(visit: (page: DispatchIntent[]) => Promise<void>): Promise<number> {
    let after: string | undefined = "";
    let total = 0;
    while (after !== undefined) {
      const page = await listTasksThatBelongInRedis(ctx.db, ctx.horizonMs, after, PAGE);
      if (page.intents.length > 0) await visit(page.intents);
      total += page.intents.length;
      after = page.next;
    }
    return total;
  }

  /**
   * Pages are read one after another (keyset), but their dispatch calls overlap
   * with the next reads, up to REBUILD_IN_FLIGHT at once: Postgres, this
   * process and Redis then work at the same time instead of taking turns.
   */
  async function rebuild(): Promise<number> {
    // Before any job is back: a worker can take none until then, so none starts past a limit.
    await limits.restoreTaskSlots(await listHeldSlots(ctx.db));
    const inFlight = new Set<Promise<void>>();
    let failure: { error: unknown } | undefined;
    const total = await forEachPage(async (page) => {
      if (failure) throw failure.error;
      const dispatched: Promise<void> = ctx.dispatcher
        .dispatch(page)
        .catch((error: unknown) => {
          failure ??= { error };
        })
        .finally(() => inFlight.delete(dispatched));
      inFlight.add(dispatched);
      if (inFlight.size >= REBUILD_IN_FLIGHT) await Promise.race(inFlight);
    });
    await Promise.all(inFlight);
    // A failed page fails the rebuild; the epoch stays unset, so the next tick starts over.
    if (failure) throw failure.error;
    return total;
  }

  /**
   * One script call per BullMQ queue (MissingJobFinder): a queue's keys share
   * its tenant's hash tag, so each call stays in one Redis Cluster slot.
   */
  async function jobsMissingFromRedis(page: DispatchIntent[]): Promise<DispatchIntent[]> {
    const missing = await Promise.all(
      [...groupByBullQueue(ctx.keys, page)].map(async ([name, intents]) => {
        const found = await finder.find(name, intents.map((i) => jobIdFor(i.taskId, i.dispatchGeneration)));
        const at = (positions: number[]) => positions.map((k) => intents[k] as DispatchIntent);
        const orphaned = at(found.orphaned);
        const stranded = at(found.stranded);
        if (orphaned.length > 0) {
          await dropJobs(name, orphaned);
          ctx.log.warn({ queue: name, jobs: orphaned.length }, "removed jobs left active by a worker that died while taking them");
        }
        if (stranded.length > 0) {
          await dropJobs(name, stranded);
          ctx.log.warn({ queue: name, jobs: stranded.length }, "re-adding jobs Redis kept without their place in the queue (a wait, prioritized or delayed set was lost)");
        }
        return [...at(found.gone), ...orphaned, ...stranded];
      }),
    );
    return missing.flat();
  }

  /**
   * Workers now take and delete a job in one script (take-jobs.lua), but
   * earlier versions took it with BullMQ's moveToActive (active list, lock)
   * and removed it in a second call; one killed in between left the job
   * active with a lock that expires and nobody reclaims, its task QUEUED with
   * a job that "exists" (found by the chaos suite: SIGKILLed workers). Such
   * jobs can still be in Redis after an upgrade, so the sweep keeps clearing
   * them: taken (processedOn set) and unlocked means the taker is gone.
   * Stranded jobs (a hash with no entry in the wait, prioritized or delayed
   * set: the set was lost, by a restart that dropped its last writes or an
   * eviction) go the same way: add-jobs.lua leaves an existing hash alone,
   * so a job is only put back once its hash is gone.
   */
  async function dropJobs(name: string, jobs: DispatchIntent[]): Promise<void> {
    const active = `${ctx.keys.prefix}:${name}:active`;
    const pipeline = ctx.redis.pipeline();
    for (const i of jobs) {
      const jobId = jobIdFor(i.taskId, i.dispatchGeneration);
      pipeline.lrem(active, 0, jobId).del(ctx.keys.jobKey(name, jobId));
    }
    await pipeline.exec();
  }

  /** One page of the current sweep pass: the number of jobs put back. */
  async function sweepPage(after: string): Promise<number> {
    const page = await listTasksThatBelongInRedis(ctx.db, ctx.horizonMs, after, PAGE, sweepUpTo);
    const missing = page.intents.length > 0 ? await jobsMissingFromRedis(page.intents) : [];
    if (missing.length > 0) await ctx.dispatcher.dispatch(missing);
    // Workers look only at the queues in the active set: one whose entry was lost (a restart that did
    // not keep the dispatcher's SADD, a DEL) kept its jobs and was never fetched again. Adding a queue
    // already there is a no-op; one with nothing left is fetched once and retired by its worker.
    if (page.intents.length > 0) await ctx.redis.sadd(ctx.keys.activeQueues, ...groupByBullQueue(ctx.keys, page.intents).keys());
    // Only a checked page moves the pass on: after a failure the same page is tried next tick.
    sweepAfter = page.next;
    return missing.length;
  }

  return async function reconcile(): Promise<void> {
    const epoch = await ctx.redis.get(ctx.keys.epochKey);
    if (epoch === null) {
      const started = Date.now();
      const n = await rebuild();
      ctx.metrics.reconcilerReadded.inc({ reason: "rebuild" }, n);
      // NX: with several schedulers, the first to finish marks the new epoch.
      await ctx.redis.set(ctx.keys.epochKey, randomUUID(), "NX");
      ctx.log.warn({ tasks: n, ms: Date.now() - started }, "Redis had no epoch: rebuilt queues from Postgres");
      lastSweep = Date.now();
      sweepAfter = undefined;
      return;
    }
    if (sweepAfter === undefined) {
      if (Date.now() - lastSweep < ctx.env.RECONCILE_INTERVAL_SECONDS * 1000) return;
      lastSweep = Date.now();
      sweepAfter = "";
      sweepUpTo = newId(IdPrefix.task);
    }
    const n = await sweepPage(sweepAfter);
    ctx.metrics.reconcilerReadded.inc({ reason: "sweep" }, n);
    if (n > 0) ctx.log.warn({ tasks: n }, "re-added jobs missing from Redis");
  };
}
