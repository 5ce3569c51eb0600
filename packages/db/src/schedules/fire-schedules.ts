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
  /**
   * Where the batch's walk over tenants with enabled schedules starts: after
   * this tenant id ("" or absent: the first), wrapping round; the previous
   * batch's `walkedTo`, so successive batches take the tenants in turn once
   * there are more than `walkLimit`.
   */
  afterTenant?: string;
  /** Most tenants one batch walks (SCHEDULE_TENANT_WALK). */
  walkLimit?: number;
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
  /** The last tenant the batch walked: the next batch's `afterTenant` (absent when nothing was due). */
  walkedTo?: string;
  /** The walk stopped at `walkLimit`: tenants past `walkedTo` were not looked at. */
  truncated?: boolean;
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

/**
 * Milliseconds until DUE (below) holds for some schedule (0: it does now), null when
 * no schedule is enabled (GREATEST alone would make that 0: it skips nulls).
 * Each min() reads the first matching entry of schedules_enabled_next_run_at_idx,
 * one for each kind of lead.
 */
const NEXT_DUE = `SELECT CASE WHEN d IS NOT NULL THEN GREATEST(0, d) END AS due_in_ms FROM (SELECT EXTRACT(EPOCH FROM LEAST(
    (SELECT min(next_run_at) FROM schedules WHERE enabled AND deleted_at IS NULL AND overlap_policy = 'ALLOW') - $1::float8 * interval '1 millisecond',
    (SELECT min(next_run_at) FROM schedules WHERE enabled AND deleted_at IS NULL AND overlap_policy <> 'ALLOW')
  ) - now())::float8 * 1000 AS d) next`;

/** Enabled, live schedules with a next run: the predicate of schedules_due_by_tenant_idx (migration schedules_due_by_tenant). */
const LIVE = `s.enabled AND s.deleted_at IS NULL AND s.next_run_at IS NOT NULL`;
/** The latest next_run_at DUE can hold ($1: the ALLOW lookahead, ms): the index range a tenant's due rows lie in. */
const DUE_BOUND = `now() + $1::float8 * interval '1 millisecond'`;
/** Schedules (as s) with an occurrence to materialise: due now, or ALLOW ones due within the lookahead ($1, ms). */
const DUE = `${LIVE} AND s.next_run_at <= ${DUE_BOUND}
  AND s.next_run_at <= now() + (CASE WHEN s.overlap_policy = 'ALLOW' THEN $1::float8 ELSE 0 END) * interval '1 millisecond'`;
const SCHEDULE_COLUMNS_S = SCHEDULE_COLUMNS.split(",").map((c) => `s.${c.trim()}`).join(", ");

/**
 * Most tenants with enabled schedules one batch walks (one index descent
 * each, a few µs); past that many, successive batches take them in turn from
 * where the last one stopped (FireOptions.afterTenant).
 */
export const SCHEDULE_TENANT_WALK = 1_000;

/**
 * A batch of due schedules, locked, a turn per tenant: every tenant's most
 * overdue schedule, then every tenant's second, and so on (oldest first within
 * a turn). In next_run_at order alone a tenant with many schedules due at the
 * same instant filled batch after batch, and a tenant whose schedules came
 * after them (in ties, the older rows) waited for all of them: QA measured
 * 1,000 schedules of two tenants firing at one second, the one with 100 always
 * last, ~2 s late, while the first of the other's 900 were on time.
 *
 * Bounded by the batch, not the backlog (ranking every due row, as 9ec330b
 * did, made a backlog of N due schedules cost ~N²/limit row reads to drain):
 * - walk: the tenants with enabled schedules, from after $3 round (at most
 *   $4), one descent each of schedules_due_by_tenant_idx, whose first entry
 *   per tenant is its earliest next_run_at;
 * - due_tenants: of those, the $2 (limit) whose earliest is the most overdue:
 *   no other tenant can have a row among the batch's first turn;
 * - turns: each due tenant's oldest due schedule (turn 1), then the one after
 *   it (turn 2), ..., one descent each, each locked as it is read
 *   (FOR UPDATE SKIP LOCKED, so DUE is checked on the locked row and another
 *   scheduler's batch is passed over, not waited for). Rows come out turn by
 *   turn and are read only as pulled: limit + due tenants rows hold every row
 *   of the turn the limit-th falls in, so oldest first within it is exact.
 *   The few more than limit stay locked until the batch commits, and the
 *   next batch takes them.
 * Every output row carries the walk's extent (the row with a null id only
 * that, when nothing was taken).
 */
const TAKE_DUE_BY_TURNS = `WITH RECURSIVE walk AS (
    (SELECT s.tenant_id, s.next_run_at AS first_at, 1 AS n FROM schedules s
     WHERE ${LIVE} AND s.tenant_id > $3 ORDER BY s.tenant_id, s.next_run_at LIMIT 1)
    UNION ALL
    SELECT x.tenant_id, x.first_at, w.n + 1 FROM walk w CROSS JOIN LATERAL (
      SELECT s.tenant_id, s.next_run_at AS first_at FROM schedules s
      WHERE ${LIVE} AND s.tenant_id > w.tenant_id ORDER BY s.tenant_id, s.next_run_at LIMIT 1
    ) x WHERE w.n < $4
  ),
  wrap AS (
    (SELECT s.tenant_id, s.next_run_at AS first_at, (SELECT count(*) FROM walk) + 1 AS n FROM schedules s
     WHERE ${LIVE} AND s.tenant_id <= $3 AND (SELECT count(*) FROM walk) < $4
     ORDER BY s.tenant_id, s.next_run_at LIMIT 1)
    UNION ALL
    SELECT x.tenant_id, x.first_at, w.n + 1 FROM wrap w CROSS JOIN LATERAL (
      SELECT s.tenant_id, s.next_run_at AS first_at FROM schedules s
      WHERE ${LIVE} AND s.tenant_id > w.tenant_id AND s.tenant_id <= $3 ORDER BY s.tenant_id, s.next_run_at LIMIT 1
    ) x WHERE w.n < $4
  ),
  walked AS (SELECT * FROM walk UNION ALL SELECT * FROM wrap),
  due_tenants AS (
    SELECT tenant_id FROM walked WHERE first_at <= ${DUE_BOUND} ORDER BY first_at, tenant_id LIMIT $2
  ),
  turns AS (
    SELECT x.*, 1 AS turn FROM due_tenants t CROSS JOIN LATERAL (
      SELECT ${SCHEDULE_COLUMNS_S} FROM schedules s WHERE s.tenant_id = t.tenant_id AND ${DUE}
      ORDER BY s.next_run_at, s.id LIMIT 1 FOR UPDATE SKIP LOCKED
    ) x
    UNION ALL
    SELECT x.*, p.turn + 1 FROM turns p CROSS JOIN LATERAL (
      SELECT ${SCHEDULE_COLUMNS_S} FROM schedules s
      WHERE s.tenant_id = p.tenant_id AND (s.next_run_at, s.id) > (p.next_run_at, p.id) AND ${DUE}
      ORDER BY s.next_run_at, s.id LIMIT 1 FOR UPDATE SKIP LOCKED
    ) x WHERE p.turn < $2
  )
  SELECT m.walked, m.walked_to, c.* FROM (
    SELECT count(*)::int AS walked, (SELECT tenant_id FROM walked ORDER BY n DESC LIMIT 1) AS walked_to FROM walked
  ) m LEFT JOIN (
    SELECT taken.*, now() AS db_now FROM (SELECT * FROM turns LIMIT $2 + (SELECT count(*) FROM due_tenants)) taken
    ORDER BY taken.turn, taken.next_run_at, taken.id LIMIT $2
  ) c ON true`;

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
    const walkLimit = options.walkLimit ?? SCHEDULE_TENANT_WALK;
    const res = await client.query(TAKE_DUE_BY_TURNS, [options.lookaheadMs, options.limit, options.afterTenant ?? "", walkLimit]);
    const extent = res.rows[0] as { walked: number; walked_to: string | null } | undefined;
    const due = res.rows.filter((row) => row.id !== null);
    const result: FireResult = {
      schedules: due.length,
      unreadable: [],
      walkedTo: extent?.walked_to ?? "",
      truncated: (extent?.walked ?? 0) >= walkLimit,
      ...emptyTally(),
    };
    // Tenant by tenant: runs of a tenant with quotas lock its usage row (and with a pending cap its
    // submit lock) until commit (admitRuns), so two schedulers taking tenants in different orders
    // could wait on each other. In one order they cannot.
    const byTenant = [...due].sort((a, b) => (a.tenant_id < b.tenant_id ? -1 : a.tenant_id > b.tenant_id ? 1 : 0));
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
