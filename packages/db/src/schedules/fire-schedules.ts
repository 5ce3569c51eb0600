import { OverlapPolicy, cronExpressionProblem, timezoneProblem } from "@tasklane/core";
import type pg from "pg";
import { prepared, withTransaction, type Database } from "../database.js";
import { emptyTally, materialiseWindow, type MaterialiseOptions, type MaterialiseTally } from "./materialise-occurrences.js";
import { SCHEDULE_COLUMNS, mapScheduleRow, type ScheduleRecord } from "./schedule-record.js";

export interface FireOptions extends MaterialiseOptions {
  /**
   * ALLOW schedules are materialised this far ahead, as SCHEDULED tasks in
   * Redis's delayed set, so they start at their instant to the millisecond
   * rather than at the next scheduler tick. Other overlap policies must look
   * at the previous run when the occurrence is due, so they fire on the tick.
   */
  lookaheadMs: number;
  limit: number;
}

export interface FireResult extends MaterialiseTally {
  /**
   * Only when nothing was due: milliseconds until the next schedule will have
   * an occurrence to materialise, or null when no schedule is enabled.
   */
  nextDueInMs?: number | null;
  schedules: number;
  /** Schedules set aside because this version cannot read their cron or zone (setAsideUnreadable). */
  unreadable: { id: string; tenantId: string; problem: string }[];
}

/**
 * A stored schedule this version cannot read: its cron expression or zone,
 * valid when written, refused now (rows from an older version, a cron-parser
 * that grew stricter, a zone the runtime's tz data no longer has). It cannot
 * fire, and its error rolled back the whole batch, every pass: one such row
 * stopped every tenant's schedules (QA). It is set aside instead: next_run_at
 * cleared (CAS), `enabled` left as the tenant set it, so the API shows an
 * enabled schedule with no next run, and an updateSchedule with a cron and
 * zone that are valid brings it back. The scheduler logs each one.
 */
async function setAsideUnreadable(client: pg.PoolClient, s: ScheduleRecord): Promise<string | null> {
  const problem = cronExpressionProblem(s.cron) ?? timezoneProblem(s.timezone);
  if (problem === null) return null;
  await client.query(`UPDATE schedules SET next_run_at = NULL, updated_at = now() WHERE id = $1 AND next_run_at = $2`, [s.id, s.nextRunAt]);
  return problem;
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
 * A batch of due schedules, locked, a turn per tenant: every tenant's most
 * overdue schedule, then every tenant's second, and so on (oldest first within
 * a turn). In next_run_at order alone a tenant with many schedules due at the
 * same instant filled batch after batch, and a tenant whose schedules came
 * after them (in ties, the older rows) waited for all of them: QA measured
 * 1,000 schedules of two tenants firing at one second, the one with 100 always
 * last, ~2 s late, while the first of the other's 900 were on time.
 * DUE is checked on the locked row too, so a schedule another scheduler has
 * just moved on is not taken on the ranking's stale view of it.
 */
const TAKE_DUE_BY_TURNS = `SELECT ${SCHEDULE_COLUMNS}, now() AS db_now
  FROM schedules JOIN (
    SELECT id AS due_id, row_number() OVER (PARTITION BY tenant_id ORDER BY next_run_at, id) AS turn FROM schedules WHERE ${DUE}
  ) turns ON turns.due_id = schedules.id
  WHERE ${DUE}
  ORDER BY turns.turn, next_run_at LIMIT $2 FOR UPDATE OF schedules SKIP LOCKED`;

/**
 * Fires every due schedule once per occurrence. Schedules are claimed with
 * FOR UPDATE SKIP LOCKED and next_run_at only moves forward under that lock,
 * and every run carries the unique occurrence key (schedule, instant): any
 * number of schedulers can run this at once and an occurrence still
 * materialises exactly once.
 */
export async function fireDueSchedules(db: Database, options: FireOptions): Promise<FireResult> {
  const probe = await db.pool.query<{ due_in_ms: number | null }>(prepared(NEXT_DUE, [options.lookaheadMs]));
  const dueInMs = probe.rows[0]?.due_in_ms ?? null;
  if (dueInMs === null || dueInMs > 0) return { nextDueInMs: dueInMs, schedules: 0, unreadable: [], ...emptyTally() };
  return withTransaction(db.pool, async (client) => {
    const due = await client.query(TAKE_DUE_BY_TURNS, [options.lookaheadMs, options.limit]);
    const result: FireResult = { schedules: due.rowCount ?? 0, unreadable: [], ...emptyTally() };
    // Tenant by tenant: runs of a tenant with quotas lock its usage row (and with a pending cap its
    // submit lock) until commit (admitRuns), so two schedulers taking tenants in different orders
    // could wait on each other. In one order they cannot.
    const byTenant = [...due.rows].sort((a, b) => (a.tenant_id < b.tenant_id ? -1 : a.tenant_id > b.tenant_id ? 1 : 0));
    for (const row of byTenant) {
      const schedule = mapScheduleRow(row);
      const problem = await setAsideUnreadable(client, schedule);
      if (problem !== null) {
        result.unreadable.push({ id: schedule.id, tenantId: schedule.tenantId, problem });
        continue;
      }
      const now = row.db_now as Date;
      const until = new Date(now.getTime() + (schedule.overlapPolicy === OverlapPolicy.ALLOW ? options.lookaheadMs : 0));
      await materialiseWindow(client, schedule, now, until, options, result);
    }
    return result;
  });
}
