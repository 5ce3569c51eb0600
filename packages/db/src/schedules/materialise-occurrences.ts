import {
  MISFIRE_GRACE_MS,
  MISFIRE_WINDOW,
  OVERLAP_SKIP_REASON,
  OverlapDecision,
  OverlapPolicy,
  assertNever,
  decideMisfireWindow,
  decideOverlap,
  missedReason,
  missedSummaryReason,
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
  /**
   * The platform's backlog cap (GLOBAL_MAX_PENDING_TASKS) as submissions meet
   * it: whether the tenant may add `runs` tasks now. Runs it refuses are
   * recorded SKIPPED, lastError PLATFORM_BACKLOG_FULL, as a quota's are.
   * Absent: no cap (updateSchedule's due occurrences; tests).
   */
  backlog?: { admits(tenantId: string, runs: number): boolean };
}

/** lastError of a cron run the platform's backlog cap held back. */
export const PLATFORM_BACKLOG_FULL = "platform backlog full (GLOBAL_MAX_PENDING_TASKS): not run";

/** What materialising occurrences did, added up over schedules and windows. */
export interface MaterialiseTally {
  /** Occurrences fired (a run, or SKIPPED by the overlap policy). */
  fired: number;
  /** Occurrences SKIPPED by the misfire policy. */
  skipped: number;
  /** Occurrences due to run but SKIPPED by the tenant's dailyTaskQuota or maxPendingTasks, or the platform's backlog cap (not in fired). */
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

/** A run inserted that will run: its occurrence and its task. */
interface RunToStart {
  at: Date;
  id: string;
}

/** The later of two runs, either possibly absent. */
const later = (a: RunToStart | null, b: RunToStart | null): RunToStart | null => (a === null || (b !== null && b.at > a.at) ? b : a);

/** Inserts the runs; returns the latest that will run (not SKIPPED by a policy, a quota or the platform's cap), or null. */
async function insertRuns(
  client: pg.PoolClient,
  s: ScheduleRecord,
  inserts: TaskInsert[],
  options: MaterialiseOptions,
  tally: MaterialiseTally,
): Promise<RunToStart | null> {
  if (inserts.length === 0) return null;
  // Cron runs met no platform cap: a tenant's schedules filled the backlog past GLOBAL_MAX_PENDING_TASKS,
  // which then refused every tenant's submissions (OVERLOADED), theirs included, while the runs went on.
  const toStart = inserts.filter((spec) => spec.initialStatus == null).length;
  if (toStart > 0 && options.backlog && !options.backlog.admits(s.tenantId, toStart)) {
    inserts = inserts.map((spec) => (spec.initialStatus == null ? { ...spec, initialStatus: "SKIPPED", lastError: PLATFORM_BACKLOG_FULL } : spec));
    tally.overQuota += toStart;
    tally.fired -= toStart;
  }
  const { tasks, dispatch } = await insertTaskRefs(client, s.tenantId, inserts, runOptions(options));
  tally.dispatch.push(...dispatch);
  let latestRun: RunToStart | null = null;
  let overQuota = 0;
  for (const [i, spec] of inserts.entries()) {
    const task = tasks[i];
    if (spec.initialStatus != null || task === undefined) continue;
    // A run to start that came back SKIPPED was held back by a quota.
    if (task.status === "SKIPPED") overQuota += 1;
    else latestRun = later(latestRun, { at: spec.runAt, id: task.id });
  }
  tally.overQuota += overQuota;
  tally.fired -= overQuota;
  return latestRun;
}

/** CANCEL_RUNNING: cancels the schedule's unfinished runs but `keep` (none: nothing happens). */
async function cancelPrevious(client: pg.PoolClient, s: ScheduleRecord, keep: RunToStart, options: MaterialiseOptions, tally: MaterialiseTally): Promise<void> {
  const cancelled = await cancelUnfinishedRuns(client, s.id, keep.id, "scheduler", options.horizonMs);
  tally.cancelledRunning.push(...cancelled.wasRunning);
  tally.dispatch.push(...cancelled.dispatch);
}

/**
 * A window's runs: `skipped` (the misfire policy's), then the occurrences to
 * fire, oldest first (returns the instant of the latest that will run, as
 * insertRuns), each as the overlap policy says given the runs before it
 * (decideOverlap), in as few statements as that allows. Deciding occurrence by
 * occurrence took a query and an insert each: a CATCH_UP recovery of 1,000
 * missed occurrences of a few per-second QUEUE schedules kept the batch's
 * transaction, and every other tenant's schedules in it, from committing for
 * over 40 s (QA). But a run inserted here stays unfinished for the rest of the
 * window, so the decisions after the first are known:
 * - ALLOW and QUEUE never look at the previous run: ALLOW starts every
 *   occurrence and QUEUE holds each behind the one before on the schedule's
 *   ordering key (ids grow in insert order). One insert, quotas checked once.
 * - SKIP: from the first occurrence that meets an unfinished run, the rest of
 *   the window is SKIPPED in one insert (a run the quotas held back, SKIPPED,
 *   is not unfinished, so the next occurrence is decided again); so too from
 *   the first the platform's backlog cap refuses, since its estimate does not
 *   change within a batch (one by one, a CATCH_UP recovery over the cap took a
 *   look and an insert per occurrence).
 * - CANCEL_RUNNING: each occurrence cancels the runs before it, so all of the
 *   window's runs go in together, then every unfinished run of the schedule
 *   but the latest that will run is cancelled. When none will run (a quota or
 *   the platform's cap held them back) nothing is cancelled: cancelling the
 *   previous run for one that could not start left nothing running (QA).
 */
async function fireOccurrences(
  client: pg.PoolClient,
  s: ScheduleRecord,
  skipped: TaskInsert[],
  fire: readonly Date[],
  options: MaterialiseOptions,
  tally: MaterialiseTally,
): Promise<RunToStart | null> {
  const runs = (ats: readonly Date[], extra: Partial<TaskInsert> = {}) => ats.map((at) => runInsert(s, at, extra));
  const policy = s.overlapPolicy;
  switch (policy) {
    case OverlapPolicy.ALLOW:
    case OverlapPolicy.QUEUE:
      return insertRuns(client, s, [...skipped, ...runs(fire)], options, tally);
    case OverlapPolicy.SKIP: {
      await insertRuns(client, s, skipped, options, tally);
      let latestRun: RunToStart | null = null;
      for (let i = 0; i < fire.length; i++) {
        if (decideOverlap(policy, await previousRunUnfinished(client, s.id)) === OverlapDecision.SKIP) {
          await insertRuns(client, s, runs(fire.slice(i), { initialStatus: "SKIPPED", lastError: OVERLAP_SKIP_REASON }), options, tally);
          return latestRun;
        }
        if (options.backlog && !options.backlog.admits(s.tenantId, 1)) {
          await insertRuns(client, s, runs(fire.slice(i)), options, tally);
          return latestRun;
        }
        latestRun = later(latestRun, await insertRuns(client, s, runs(fire.slice(i, i + 1)), options, tally));
      }
      return latestRun;
    }
    case OverlapPolicy.CANCEL_RUNNING: {
      await insertRuns(client, s, skipped, options, tally);
      const latest = await insertRuns(client, s, runs(fire), options, tally);
      if (latest !== null) await cancelPrevious(client, s, latest, options, tally);
      return latest;
    }
    default:
      return assertNever(policy);
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
  const summary = decision.summary;
  const skipped = decision.skip.map((at) =>
    runInsert(s, at, { initialStatus: "SKIPPED", lastError: summary?.occurrence === at ? missedSummaryReason(summary) : missedReason(s.misfirePolicy) }),
  );
  // last_run_at is the latest occurrence that runs: one SKIPPED by the overlap policy or a quota did
  // not, and lastRunAt showed it (then, for ALLOW, the last real run while the next was materialised ahead).
  const latestRun = (await fireOccurrences(client, s, skipped, decision.fire, options, tally))?.at ?? null;
  tally.fired += decision.fire.length;
  tally.skipped += decision.skip.length;
  const last = occurrences[decision.decided - 1] as Date;
  const whole = decision.decided === occurrences.length && !more;
  const next = nextOccurrence(s.cron, s.timezone, whole ? new Date(Math.max(last.getTime(), until.getTime())) : last);
  await client.query(
    `UPDATE schedules SET next_run_at = $3, last_run_at = COALESCE($4, last_run_at), updated_at = now()
     WHERE id = $1 AND next_run_at = $2`,
    [s.id, first, next, latestRun],
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
