import {
  MISFIRE_GRACE_MS,
  MISFIRE_WINDOW,
  OverlapDecision,
  OverlapPolicy,
  assertNever,
  decideMisfireWindow,
  decideOverlap,
  nextOccurrence,
  occurrenceKey,
  occurrencesBetween,
} from "@tasklane/core";
import type pg from "pg";
import type { DispatchIntent } from "../outbox/dispatch-intent.js";
import { insertTaskRefs, type SubmitOptions, type TaskInsert } from "../tasks/submit-tasks.js";
import { cancelUnfinishedRuns } from "./cancel-runs.js";
import type { ScheduleRecord } from "./schedule-record.js";

export interface MaterialiseOptions {
  horizonMs: number;
  /** Lateness still on time (MisfireInput.graceMs); MISFIRE_GRACE_MS when absent. */
  graceMs?: number;
  /** Starts each run's trace (SubmitOptions.newTraceParent); absent: runs have none. */
  newTraceParent?: () => string | null;
}

/** What materialising occurrences did, added up over schedules and windows. */
export interface MaterialiseTally {
  /** Occurrences fired (a run, or SKIPPED by the overlap policy). */
  fired: number;
  /** Occurrences SKIPPED by the misfire policy. */
  skipped: number;
  /** Occurrences due to run but SKIPPED by the tenant's dailyTaskQuota or maxPendingTasks (not in fired). */
  overQuota: number;
  dispatch: DispatchIntent[];
  /** Runs cancelled by CANCEL_RUNNING that were RUNNING: their executors must be told. */
  cancelledRunning: string[];
}

export const emptyTally = (): MaterialiseTally => ({ fired: 0, skipped: 0, overQuota: 0, dispatch: [], cancelledRunning: [] });

/** The ordering key that serialises the runs of a QUEUE-overlap schedule. */
export const scheduleOrderingKey = (scheduleId: string) => `tasklane:schedule:${scheduleId}`;

/**
 * How cron runs are inserted: by the scheduler, each with its own trace,
 * counted toward the tenant's quotas like submissions; one past
 * dailyTaskQuota or maxPendingTasks is recorded SKIPPED, lastError saying
 * which, never refused (SubmitOptions.quotas "skip"): the batch's other
 * schedules, and this one's later occurrences, go on as usual.
 */
function runOptions(options: MaterialiseOptions): SubmitOptions {
  return {
    horizonMs: options.horizonMs,
    actor: "scheduler",
    quotas: "skip",
    ...(options.newTraceParent ? { newTraceParent: options.newTraceParent } : {}),
  };
}

function runInsert(s: ScheduleRecord, at: Date, extra: Partial<TaskInsert>): TaskInsert {
  const t = s.template;
  return {
    type: t.type,
    queue: t.queue,
    payload: t.payload ?? null,
    priority: t.priority,
    runAt: at,
    maxAttempts: t.maxAttempts,
    backoff: t.backoff,
    timeoutSeconds: t.timeoutSeconds,
    idempotencyKey: null,
    orderingKey: s.overlapPolicy === OverlapPolicy.QUEUE ? scheduleOrderingKey(s.id) : null,
    callbackUrl: null,
    metadata: null,
    scheduleId: s.id,
    occurrenceKey: occurrenceKey(s.id, at),
    ...extra,
  };
}

async function previousRunUnfinished(client: pg.PoolClient, scheduleId: string): Promise<boolean> {
  const res = await client.query(
    `SELECT 1 FROM tasks WHERE schedule_id = $1 AND status IN ('SCHEDULED', 'QUEUED', 'RUNNING', 'RETRYING', 'BLOCKED') LIMIT 1`,
    [scheduleId],
  );
  return (res.rowCount ?? 0) > 0;
}

async function insertRuns(client: pg.PoolClient, s: ScheduleRecord, inserts: TaskInsert[], options: MaterialiseOptions, tally: MaterialiseTally): Promise<void> {
  if (inserts.length === 0) return;
  const { tasks, dispatch } = await insertTaskRefs(client, s.tenantId, inserts, runOptions(options));
  tally.dispatch.push(...dispatch);
  // A run to start that came back SKIPPED was held back by a quota.
  const overQuota = inserts.filter((spec, i) => spec.initialStatus == null && tasks[i]?.status === "SKIPPED").length;
  tally.overQuota += overQuota;
  tally.fired -= overQuota;
}

/** One occurrence to fire, as the overlap policy says given the schedule's unfinished runs. */
async function fireOccurrence(client: pg.PoolClient, s: ScheduleRecord, at: Date, options: MaterialiseOptions, tally: MaterialiseTally): Promise<void> {
  const overlap = decideOverlap(s.overlapPolicy, await previousRunUnfinished(client, s.id));
  switch (overlap) {
    case OverlapDecision.START:
    case OverlapDecision.QUEUE:
      return insertRuns(client, s, [runInsert(s, at, {})], options, tally);
    case OverlapDecision.SKIP:
      return insertRuns(client, s, [runInsert(s, at, { initialStatus: "SKIPPED" })], options, tally);
    case OverlapDecision.CANCEL_PREVIOUS_THEN_START: {
      const cancelled = await cancelUnfinishedRuns(client, s.id, "scheduler", options.horizonMs);
      tally.cancelledRunning.push(...cancelled.wasRunning);
      tally.dispatch.push(...cancelled.dispatch);
      return insertRuns(client, s, [runInsert(s, at, {})], options, tally);
    }
    default:
      return assertNever(overlap);
  }
}

/**
 * Materialises one window of a schedule's occurrences, from its next_run_at
 * up to `until`, as its misfire and overlap policies say (decideMisfireWindow:
 * a long backlog takes several windows), then moves next_run_at past what was
 * decided. The caller holds the schedule's row lock; the CAS on next_run_at
 * guards against a caller that does not. Returns the new next_run_at.
 */
export async function materialiseWindow(
  client: pg.PoolClient,
  s: ScheduleRecord,
  now: Date,
  until: Date,
  options: MaterialiseOptions,
  tally: MaterialiseTally,
): Promise<Date | null> {
  const first = s.nextRunAt as Date;
  const occurrences = [first, ...occurrencesBetween(s.cron, s.timezone, first, until, MISFIRE_WINDOW - 1)];
  const more = occurrences.length >= MISFIRE_WINDOW;
  const decision = decideMisfireWindow({ policy: s.misfirePolicy, occurrences, more, now, graceMs: options.graceMs ?? MISFIRE_GRACE_MS });
  const skipped = decision.skip.map((at) => runInsert(s, at, { initialStatus: "SKIPPED" }));
  if (s.overlapPolicy === OverlapPolicy.ALLOW) {
    // ALLOW starts every occurrence whatever ran before (decideOverlap): the window is one insert,
    // its quotas checked once for all of its runs.
    await insertRuns(client, s, [...skipped, ...decision.fire.map((at) => runInsert(s, at, {}))], options, tally);
  } else {
    await insertRuns(client, s, skipped, options, tally);
    // One at a time: each run must be visible to the overlap check of the next.
    for (const at of decision.fire) await fireOccurrence(client, s, at, options, tally);
  }
  tally.fired += decision.fire.length;
  tally.skipped += decision.skip.length;
  const last = occurrences[decision.decided - 1] as Date;
  const whole = decision.decided === occurrences.length && !more;
  const next = nextOccurrence(s.cron, s.timezone, whole ? new Date(Math.max(last.getTime(), until.getTime())) : last);
  await client.query(
    `UPDATE schedules SET next_run_at = $3, last_run_at = COALESCE($4, last_run_at), updated_at = now()
     WHERE id = $1 AND next_run_at = $2`,
    [s.id, first, next, decision.fire.at(-1) ?? null],
  );
  return next;
}

/**
 * Every occurrence of the schedule due by `now` (the caller's transaction
 * time), window after window, under the schedule as it is: a change or a
 * delete calls this first, so that occurrences the scheduler had not reached
 * yet are fired or recorded as the schedule said when they fell due.
 */
export async function materialiseDue(client: pg.PoolClient, s: ScheduleRecord, now: Date, options: MaterialiseOptions): Promise<MaterialiseTally> {
  const tally = emptyTally();
  let nextRunAt = s.nextRunAt;
  while (s.enabled && nextRunAt !== null && nextRunAt.getTime() <= now.getTime()) {
    nextRunAt = await materialiseWindow(client, { ...s, nextRunAt }, now, now, options, tally);
  }
  return tally;
}
