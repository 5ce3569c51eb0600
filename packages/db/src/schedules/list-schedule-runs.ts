import { ANSWER_BODY_BYTES, ANSWER_TASK_ROWS, tooManyTaskRows, type BulkRead, type BulkReadAllowance } from "@tasklane/core";
import type { Queryable } from "../database.js";
import { bodyBytesOf, withheldBodiesSql } from "../tasks/page-body-budget.js";
import { TASK_COLUMNS, TASK_COLUMN_NAMES_BUT_BODIES, mapTaskRow, type TaskRecord } from "../tasks/task-record.js";

/**
 * A run's scheduled time, for candidates `k` (id, occurrence_key, schedule_id,
 * status, run_at, created_at): a cron run's occurrence (in its key); a run a
 * change skipped, whose key was released, its run_at (never retried); a
 * triggered run, when it was triggered. Not run_at as such: a retry moves it
 * to the retry's time, and a run failed ten minutes ago and retrying led the
 * list above every newer run (QA).
 */
const SCHEDULED_AT = `CASE WHEN k.occurrence_key IS NOT NULL THEN substr(k.occurrence_key, length(k.schedule_id) + 2)::timestamptz
    WHEN k.status = 'SKIPPED' THEN k.run_at ELSE k.created_at END`;
const RUN_KEYS = "t.id, t.occurrence_key, t.schedule_id, t.status, t.run_at, t.created_at";

/**
 * Materialised runs of each schedule, newest scheduled time first, at most
 * `first` a schedule (deleted schedules' runs included), within what the
 * answer has left (core's answer-budget.ts): more than `left.rows` runs in
 * all is refused (one row past it is read to know); past `left.bytes` of
 * payloads and results, in the schedules' order and then the runs', a run's
 * bodies are withheld (WITHHELD_BODY) and stay in Postgres. `schedules
 * { runs(first: 100) { payload } }` over a tenant's 1,000 schedules was
 * 100,000 rows with their payloads.
 */
export async function listScheduleRuns(
  db: { pool: Queryable },
  tenantId: string,
  scheduleIds: readonly string[],
  first: number,
  left: BulkReadAllowance = { bytes: ANSWER_BODY_BYTES, rows: ANSWER_TASK_ROWS },
): Promise<BulkRead<Map<string, TaskRecord[]>>> {
  const out = new Map<string, TaskRecord[]>(scheduleIds.map((id) => [id, []]));
  if (scheduleIds.length === 0) return { value: out, used: { bytes: 0, rows: 0 } };
  // A schedule's newest `first` by scheduled time are among its newest `first` cron runs by occurrence
  // key (the unique index, in time order) and its newest `first` by run_at (the runs without a key:
  // their run_at is never before their scheduled time; exact unless `first` retried runs wait past a
  // newer run without a key).
  const candidates = `SELECT ${TASK_COLUMNS}, s.n AS schedule_order, c.scheduled_at FROM unnest($2::text[]) WITH ORDINALITY AS s(id, n)
     CROSS JOIN LATERAL (
       SELECT k.id, ${SCHEDULED_AT} AS scheduled_at FROM (
         (SELECT ${RUN_KEYS} FROM tasks t
          WHERE t.occurrence_key > s.id || ':' AND t.occurrence_key < s.id || ';' AND t.tenant_id = $1
          ORDER BY t.occurrence_key DESC LIMIT $3)
         UNION
         (SELECT ${RUN_KEYS} FROM tasks t WHERE t.schedule_id = s.id AND t.tenant_id = $1 ORDER BY t.run_at DESC, t.id DESC LIMIT $3)
       ) k ORDER BY scheduled_at DESC, k.id DESC LIMIT $3
     ) c JOIN tasks t ON t.id = c.id JOIN queues q ON q.id = t.queue_id
     ORDER BY s.n, c.scheduled_at DESC, t.id DESC LIMIT $4`;
  const res = await db.pool.query(withheldBodiesSql(candidates, TASK_COLUMN_NAMES_BUT_BODIES, "schedule_order, scheduled_at DESC, id DESC", "$5"), [
    tenantId,
    [...scheduleIds],
    first,
    left.rows + 1,
    left.bytes,
  ]);
  if (res.rows.length > left.rows) {
    const what = scheduleIds.length === 1 ? "This schedule's runs" : "These schedules' runs";
    throw tooManyTaskRows(what, res.rows.length, left.rows, "page one schedule's with tasks(filter: { scheduleId })");
  }
  for (const row of res.rows) out.get(row.schedule_id as string)?.push(mapTaskRow(row));
  return { value: out, used: { bytes: bodyBytesOf(res.rows), rows: res.rows.length } };
}
