import { TenantWalk } from "@tasklane/core";
import { fireDueSchedules, type PlatformBacklogReading } from "@tasklane/db";
import { newTaskTrace, withFastPathSpans } from "@tasklane/observability";
import { announceCancellations, dispatchAfterCommit } from "@tasklane/queue";
import type { SchedulerContext } from "../context.js";

const BATCH = 100;
/** See FireOptions.lookaheadMs: ALLOW runs are materialised this early and started by BullMQ's delayed set. */
const LOOKAHEAD_MS = 2_000;
/**
 * Longest sleep while a session LISTENs for schedule writes (migration
 * schedule_notify_wakeup): a write that brings an occurrence nearer wakes the
 * loop, so this only bounds what no notification announced.
 */
export const SCHEDULE_IDLE_MAX_MS = 5_000;
/** Longest sleep while nothing LISTENs (the session is being reopened), and the wait when another scheduler holds the due schedules. */
export const SCHEDULE_POLL_MS = 100;
/**
 * Batches in a row that walk on at once while they take nothing and stop
 * short of the last tenant (past SCHEDULE_TENANT_WALK tenants with enabled
 * schedules), before waiting SCHEDULE_POLL_MS as for due schedules another
 * scheduler holds.
 */
const WALK_ON = 8;

/**
 * Materialises due cron occurrences (exactly once, whatever the number of
 * schedulers), then answers how long the loop may sleep: until the next
 * occurrence falls due (never longer than `maxWaitMs`), at once after firing
 * some (the next look says when the next falls due) or when the batch's walk
 * over tenants stopped short of the last one with nothing taken (the next
 * batch walks on), or true for a full batch.
 *
 * One per loop: it keeps where the next batch's walk starts
 * (FireOptions.afterTenant), so past SCHEDULE_TENANT_WALK tenants with enabled
 * schedules successive batches take them in turn. `backlog`: the platform cap's
 * last reading (refreshed by a loop of its own); null: no cap.
 */
export function createScheduleFiring(ctx: SchedulerContext, backlog: PlatformBacklogReading | null): (maxWaitMs: number) => Promise<boolean | number> {
  const walk = new TenantWalk(WALK_ON);
  return async (maxWaitMs) => {
    const result = await fireBatch(ctx, maxWaitMs, walk.after, backlog);
    // Every window walked in turn and still nothing to take: another scheduler holds them.
    if (!walk.walked(result.walkedTo, result.walkedOn === true) && result.walkedOn === true) return SCHEDULE_POLL_MS;
    return result.wait;
  };
}

/** One batch, its walk over tenants from the first, without the platform cap (what createScheduleFiring's loop does, without the rotation). */
export async function fireSchedules(ctx: SchedulerContext, maxWaitMs: number): Promise<boolean | number> {
  return (await fireBatch(ctx, maxWaitMs, "", null)).wait;
}

async function fireBatch(
  ctx: SchedulerContext,
  maxWaitMs: number,
  afterTenant: string,
  backlog: PlatformBacklogReading | null,
): Promise<{ wait: boolean | number; walkedTo?: string; walkedOn?: boolean }> {
  const result = await fireDueSchedules(ctx.db, {
    afterTenant,
    ...(backlog ? { backlog } : {}),
    lookaheadMs: LOOKAHEAD_MS,
    horizonMs: ctx.horizonMs,
    limit: BATCH,
    graceMs: ctx.env.SCHEDULE_MISFIRE_GRACE_SECONDS * 1000,
    // Each cron run is its own trace, rooted where it is materialised.
    newTraceParent: () => newTaskTrace("task.scheduled", null, {}),
  });
  if (result.nextDueInMs !== undefined) return { wait: Math.min(result.nextDueInMs ?? maxWaitMs, maxWaitMs) };
  const walkedTo = result.walkedTo;
  ctx.metrics.schedulesFired.inc(result.fired);
  for (const s of result.unreadable) {
    ctx.log.warn({ scheduleId: s.id, tenantId: s.tenantId, problem: s.problem }, "schedule set aside: its cron or time zone cannot be read; an update with valid ones brings it back");
  }
  if (result.schedules > 0) ctx.log.debug({ fired: result.fired, skipped: result.skipped, overQuota: result.overQuota }, "schedules fired");
  await withFastPathSpans(
    "task.dispatch",
    result.dispatch,
    (onError) => dispatchAfterCommit(ctx.db, ctx.dispatcher, result.dispatch, onError),
    (error) => ctx.log.warn({ err: error }, "fast dispatch failed; outbox will retry"),
  );
  // Best effort and bounded (announceCancellations): awaited as it was, a Redis outage held the
  // PUBLISH in ioredis's offline queue and stopped every tenant's schedules until Redis came back.
  await announceCancellations(ctx.redis, ctx.keys, result.cancelledRunning).catch((error: unknown) =>
    ctx.log.warn({ err: error, tasks: result.cancelledRunning.length }, "could not announce cancelled runs; workers learn it from the outcome or heartbeat"),
  );
  if (result.schedules === BATCH) return { wait: true, walkedTo };
  // After firing, look again at once: that look says when the next occurrence falls due; so too
  // when the walk stopped short with nothing taken (the due ones are further on). None claimed
  // although some were due and every tenant walked: another scheduler holds them, and moves them on.
  const walkedOn = result.schedules === 0 && result.truncated === true;
  return { wait: result.schedules > 0 || walkedOn ? 0 : SCHEDULE_POLL_MS, walkedTo, walkedOn };
}
