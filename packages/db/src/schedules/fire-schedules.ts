import {
  MISFIRE_GRACE_MS,
  MAX_CATCH_UP_RUNS,
  OverlapDecision,
  OverlapPolicy,
  assertNever,
  decideMisfire,
  decideOverlap,
  nextOccurrence,
  occurrenceKey,
  occurrencesBetween,
} from "@tasklane/core";
import type pg from "pg";
import { prepared, withTransaction, type Database } from "../database.js";
import type { DispatchIntent } from "../outbox/dispatch-intent.js";
import { insertTaskRefs, type SubmitOptions, type TaskInsert } from "../tasks/submit-tasks.js";
import { cancelUnfinishedRuns } from "./cancel-runs.js";
import { SCHEDULE_COLUMNS, mapScheduleRow, type ScheduleRecord } from "./schedule-record.js";

/** How cron runs are inserted: by the scheduler, outside quotas (see SubmitOptions.quotas), each with its own trace. */
function runOptions(options: FireOptions): SubmitOptions {
  return {
    horizonMs: options.horizonMs,
    actor: "scheduler",
    quotas: false,
    ...(options.newTraceParent ? { newTraceParent: options.newTraceParent } : {}),
  };
}

export interface FireOptions {
  /**
   * ALLOW schedules are materialised this far ahead, as SCHEDULED tasks in
   * Redis's delayed set, so they start at their instant to the millisecond
   * rather than at the next scheduler tick. Other overlap policies must look
   * at the previous run when the occurrence is due, so they fire on the tick.
   */
  lookaheadMs: number;
  horizonMs: number;
  limit: number;
  graceMs?: number;
  /** Starts each run's trace (SubmitOptions.newTraceParent); absent: runs have none. */
  newTraceParent?: () => string | null;
}

export interface FireResult {
  /**
   * Only when nothing was due: milliseconds until the next schedule will have
   * an occurrence to materialise, or null when no schedule is enabled.
   */
  nextDueInMs?: number | null;
  schedules: number;
  fired: number;
  skipped: number;
  dispatch: DispatchIntent[];
  /** Runs cancelled by CANCEL_RUNNING that were RUNNING: their executors must be told. */
  cancelledRunning: string[];
}

/** The ordering key that serialises the runs of a QUEUE-overlap schedule. */
export const scheduleOrderingKey = (scheduleId: string) => `tasklane:schedule:${scheduleId}`;

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
    occurrenceKey: occurrenceKey(s.id, s.version, at),
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

/** Schedules with an occurrence to materialise: due now, or ALLOW ones due within the lookahead ($1, ms). */
const DUE = `enabled AND deleted_at IS NULL AND next_run_at IS NOT NULL
  AND next_run_at <= now() + (CASE WHEN overlap_policy = 'ALLOW' THEN $1::float8 ELSE 0 END) * interval '1 millisecond'`;
/**
 * Milliseconds until DUE holds for some schedule (0: it does now), null when
 * no schedule is enabled (GREATEST alone would make that 0: it skips nulls).
 * Each min() reads the first matching entry of schedules_enabled_next_run_at_idx,
 * one for each kind of lead.
 */
const NEXT_DUE = `SELECT CASE WHEN d IS NOT NULL THEN GREATEST(0, d) END AS due_in_ms FROM (SELECT EXTRACT(EPOCH FROM LEAST(
    (SELECT min(next_run_at) FROM schedules WHERE enabled AND deleted_at IS NULL AND overlap_policy = 'ALLOW') - $1::float8 * interval '1 millisecond',
    (SELECT min(next_run_at) FROM schedules WHERE enabled AND deleted_at IS NULL AND overlap_policy <> 'ALLOW')
  ) - now())::float8 * 1000 AS d) next`;

/**
 * Fires every due schedule once per occurrence. Schedules are claimed with
 * FOR UPDATE SKIP LOCKED and next_run_at only moves forward under that lock,
 * and every run carries the unique occurrence key (schedule, version,
 * instant): any number of schedulers can run this at once and an occurrence
 * still materialises exactly once.
 */
export async function fireDueSchedules(db: Database, options: FireOptions): Promise<FireResult> {
  const probe = await db.pool.query<{ due_in_ms: number | null }>(prepared(NEXT_DUE, [options.lookaheadMs]));
  const dueInMs = probe.rows[0]?.due_in_ms ?? null;
  if (dueInMs === null || dueInMs > 0) return { nextDueInMs: dueInMs, schedules: 0, fired: 0, skipped: 0, dispatch: [], cancelledRunning: [] };
  return withTransaction(db.pool, async (client) => {
    const due = await client.query(
      `SELECT ${SCHEDULE_COLUMNS}, now() AS db_now FROM schedules WHERE ${DUE}
       ORDER BY next_run_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
      [options.lookaheadMs, options.limit],
    );
    const result: FireResult = { schedules: due.rowCount ?? 0, fired: 0, skipped: 0, dispatch: [], cancelledRunning: [] };
    for (const row of due.rows) {
      const schedule = mapScheduleRow(row);
      const now = row.db_now as Date;
      const until = new Date(now.getTime() + (schedule.overlapPolicy === OverlapPolicy.ALLOW ? options.lookaheadMs : 0));
      const first = schedule.nextRunAt as Date;
      const batchCap = MAX_CATCH_UP_RUNS + 1;
      const occurrences = [first, ...occurrencesBetween(schedule.cron, schedule.timezone, first, until, batchCap - 1)];
      const truncated = occurrences.length >= batchCap;
      const decision = decideMisfire({ policy: schedule.misfirePolicy, dueOccurrences: occurrences, now, graceMs: options.graceMs ?? MISFIRE_GRACE_MS });
      // A truncated FIRE_ONCE batch is entirely older than the one run that will fire in the last batch.
      const fire = truncated && schedule.misfirePolicy === "FIRE_ONCE" ? [] : decision.fire;
      const inserts: TaskInsert[] = decision.skip.map((at) => runInsert(schedule, at, { initialStatus: "SKIPPED" }));
      for (const at of fire) {
        const overlap = decideOverlap(schedule.overlapPolicy, await previousRunUnfinished(client, schedule.id));
        switch (overlap) {
          case OverlapDecision.START:
          case OverlapDecision.QUEUE:
            inserts.push(runInsert(schedule, at, {}));
            break;
          case OverlapDecision.SKIP:
            inserts.push(runInsert(schedule, at, { initialStatus: "SKIPPED" }));
            break;
          case OverlapDecision.CANCEL_PREVIOUS_THEN_START: {
            const cancelled = await cancelUnfinishedRuns(client, schedule.id, "scheduler", options.horizonMs);
            result.cancelledRunning.push(...cancelled.wasRunning);
            result.dispatch.push(...cancelled.dispatch);
            inserts.push(runInsert(schedule, at, {}));
            break;
          }
          default:
            assertNever(overlap);
        }
        // Each run must be visible to the overlap check of the next occurrence in this batch.
        if (inserts.length) {
          const { dispatch } = await insertTaskRefs(client, schedule.tenantId, inserts.splice(0), runOptions(options));
          result.dispatch.push(...dispatch);
        }
      }
      if (inserts.length) {
        const { dispatch } = await insertTaskRefs(client, schedule.tenantId, inserts, runOptions(options));
        result.dispatch.push(...dispatch);
      }
      result.fired += fire.length;
      result.skipped += decision.skip.length;
      const last = occurrences[occurrences.length - 1] as Date;
      const next = nextOccurrence(schedule.cron, schedule.timezone, truncated ? last : new Date(Math.max(last.getTime(), until.getTime())));
      await client.query(
        `UPDATE schedules SET next_run_at = $3, last_run_at = COALESCE($4, last_run_at), updated_at = now()
         WHERE id = $1 AND next_run_at = $2`,
        [schedule.id, first, next, fire.length ? fire[fire.length - 1] : null],
      );
    }
    return result;
  });
}
