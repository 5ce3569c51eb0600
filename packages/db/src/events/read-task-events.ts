import type { TaskStatus } from "@tasklane/core";
import { prepared, type Queryable } from "../database.js";
import type { TaskEventRow, WindowRow } from "./relay-window.js";

export interface TaskEventRead {
  /** The rows answered of the window, ascending (see READ_AFTER). */
  rows: WindowRow[];
  /** How many events the window held: fewer than asked for means the read reached the end. */
  windowSize: number;
  /** Whether every event of the window was answered in full, whoever listens to it. */
  inFull: boolean;
  /** The snapshot the rows were read in (`pg_current_snapshot()` as text). */
  snapshot: string;
}

/** A task_events row's columns as the reads answer them, its task's queue and workflow joined in. */
export interface EventColumns {
  task_id: string;
  tenant_id: string;
  queue_id: string | null;
  workflow_id: string | null;
  from_status: TaskStatus | null;
  to_status: TaskStatus;
  at: Date;
}

interface ReadRow extends EventColumns {
  snapshot: string;
  window_size: number;
  /** Null in the one row answered when there are no events after the cursor. */
  id: string | null;
  prev_id: string;
  listened: boolean;
}

/**
 * The task's queue and workflow for event `e` (what subscribers filter on):
 * a lateral probe, fenced (LIMIT) so the planner cannot turn it into a hash of
 * every task, since a prepared statement's generic plan guesses its sizes (on a
 * never-analyzed table, 12 ms). `when` skips the probe for rows that do not need it.
 */
export const taskOfEvent = (when = "true") =>
  `LEFT JOIN LATERAL (SELECT tk.queue_id, tk.workflow_id FROM tasks tk WHERE ${when} AND tk.id = e.task_id LIMIT 1) t ON true`;

/**
 * The window is the next `$2` events after the cursor `$1`; of those it
 * answers the events of the tenants in `$3` (someone listens to them) with
 * their task's queue and workflow, and of the rest only the rows that place
 * the cursor: one just after each hole in the ids and the window's last
 * (`$4` true answers every event in full).
 * Every answered row carries the id before it in the window (prev_id) and,
 * with the window's size, the statement's snapshot. Relaying every event
 * cost the notifier 30-40 µs of CPU per task, nearly all for tenants nobody
 * watched. The rows come back plain, not as one json_agg value: building that
 * JSON was three quarters of the statement (3.4 against ~1 ms for 500 events),
 * and planning it, unnamed, another 1.4 ms on every read. When nothing follows
 * the cursor the answer is one row, all nulls but the snapshot.
 */
const READ_AFTER = `WITH w AS (
    SELECT ev.id, ev.task_id, ev.tenant_id, ev.from_status, ev.to_status, ev.at, ($4::boolean OR ev.tenant_id = ANY($3::text[])) AS listened
      FROM task_events ev WHERE ev.id > $1::bigint ORDER BY ev.id LIMIT $2
  ), x AS (
    SELECT w.*, lag(w.id, 1, $1::bigint) OVER (ORDER BY w.id) AS prev_id, lead(w.id) OVER (ORDER BY w.id) IS NULL AS last,
      count(*) OVER () AS window_size
      FROM w
  )
  SELECT s.snapshot, e.window_size::int AS window_size, e.id::text AS id, e.prev_id::text AS prev_id, e.listened,
    e.task_id, e.tenant_id, t.queue_id, t.workflow_id, e.from_status, e.to_status, e.at
  FROM (SELECT pg_current_snapshot()::text AS snapshot) s
  LEFT JOIN LATERAL (SELECT * FROM x WHERE x.listened OR x.id > x.prev_id + 1 OR x.last) e ON true
  ${taskOfEvent("e.listened")}
 ORDER BY e.id`;

export const taskEventRowOf = (id: string, r: EventColumns): TaskEventRow => ({
  id,
  taskId: r.task_id,
  tenantId: r.tenant_id,
  queueId: r.queue_id,
  workflowId: r.workflow_id,
  fromStatus: r.from_status,
  toStatus: r.to_status,
  at: r.at,
});

/**
 * Past this many tenants listened to, the read answers every event in full:
 * a generic plan tests `= ANY(array parameter)` element by element, so a long
 * list would cost more per row than publishing what nobody reads.
 */
export const MAX_LISTENING_FILTER = 256;

/**
 * The window of events after `cursor` (see READ_AFTER) and the snapshot it
 * was read in: one statement, so both come from the same snapshot
 * (relay-window.ts needs that to tell a hole that may still fill in from one
 * that will not). The walk is on the primary key. `listening` null answers
 * every event in full; so does a list longer than MAX_LISTENING_FILTER.
 */
export async function readTaskEventsAfter(client: Queryable, cursor: bigint, limit: number, listening: readonly string[] | null): Promise<TaskEventRead> {
  const all = listening === null || listening.length > MAX_LISTENING_FILTER;
  const res = await client.query<ReadRow>(prepared(READ_AFTER, [cursor.toString(), limit, all ? [] : listening, all]));
  const first = res.rows[0];
  if (first === undefined) throw new Error("snapshot query returned no row");
  const rows: WindowRow[] = [];
  for (const r of res.rows) {
    if (r.id === null) continue;
    rows.push({ id: r.id, prevId: r.prev_id, event: r.listened ? taskEventRowOf(r.id, r) : null });
  }
  return { snapshot: first.snapshot, windowSize: first.window_size ?? 0, inFull: all, rows };
}

const READ_BETWEEN = `SELECT e.id::text AS id, e.task_id, e.tenant_id, t.queue_id, t.workflow_id, e.from_status, e.to_status, e.at
  FROM task_events e
  ${taskOfEvent()}
 WHERE e.id > $1::bigint AND e.id <= $2::bigint AND e.tenant_id = ANY($3::text[])
 ORDER BY e.id`;

/**
 * The events of `tenantIds` with ids in (after, through], ascending: what a
 * window the relay has walked held for tenants marked as listened to only
 * after it was read.
 */
export async function readTaskEventsBetween(client: Queryable, after: bigint, through: bigint, tenantIds: readonly string[]): Promise<TaskEventRow[]> {
  if (tenantIds.length === 0 || through <= after) return [];
  const res = await client.query<EventColumns & { id: string }>(prepared(READ_BETWEEN, [after.toString(), through.toString(), tenantIds]));
  return res.rows.map((r) => taskEventRowOf(r.id, r));
}

/**
 * Whether every transaction that was in progress in `snapshot` has finished
 * (committed or rolled back). pg_xact_status answers NULL for a transaction
 * too old to look up, which is long finished too.
 */
export async function snapshotSettled(client: Queryable, snapshot: string): Promise<boolean> {
  const res = await client.query<{ settled: boolean }>(
    `SELECT NOT EXISTS (
       SELECT 1 FROM pg_snapshot_xip($1::pg_snapshot) x WHERE pg_xact_status(x) = 'in progress'
     ) AS settled`,
    [snapshot],
  );
  return res.rows[0]?.settled ?? false;
}

/** The newest event id and the snapshot it was read in. */
export interface EventHorizon {
  /** The highest task_events id visible in `snapshot` (0 when there is none). */
  maxId: bigint;
  snapshot: string;
}

const READ_HORIZON = `SELECT pg_current_snapshot()::text AS snapshot, coalesce((SELECT max(id) FROM task_events), 0)::text AS max_id`;

/**
 * The highest event id and the snapshot it was read in: one probe at the
 * primary key's end, whatever lies behind it. Once every transaction in that
 * snapshot's in-progress list has ended (snapshotSettled), every id up to it
 * is final, committed or never to be: a lower id was drawn before the highest
 * one, so by a writer that already had a transaction id (the writers'
 * invariant, relay-window.ts) and was either done or in progress when the
 * snapshot was taken. A relay nobody listens to can move its cursor there
 * without reading a row.
 */
export async function readEventHorizon(client: Queryable): Promise<EventHorizon> {
  const res = await client.query<{ snapshot: string; max_id: string }>(prepared(READ_HORIZON, []));
  const row = res.rows[0];
  if (row === undefined) throw new Error("horizon query returned no row");
  return { maxId: BigInt(row.max_id), snapshot: row.snapshot };
}
