/**
 * What a resumed subscription (`taskUpdated(after:)`) reads back from
 * Postgres before it goes live: a tenant's events in a closed id range, in id
 * order, a page at a time. The gateway only asks for ranges the relay has
 * already walked (relay-cursor.ts), where every id is final: committed, or
 * never to be.
 */
import { prepared, type Queryable } from "../database.js";
import { taskEventRowOf, taskOfEvent, type EventColumns } from "./read-task-events.js";
import type { TaskEventRow } from "./relay-window.js";

/** Which of a tenant's events a subscription follows: one task's, one queue's, or all of them. */
export interface ReplayFilter {
  tenantId: string;
  taskId: string | null;
  queueId: string | null;
}

export interface ReplayPage {
  /** The filter's events in the page's range, ascending; an event whose task has been deleted since has a null queueId. */
  events: TaskEventRow[];
  /** The last id the page looked at: the next page starts after it. Equals `through` once the range is read. */
  readTo: bigint;
}

interface ReplayRow extends EventColumns {
  /** Null only in the one row a log page answers when none of its events is the filter's. */
  id: string | null;
}

/** One task's events: its own index, (task_id, id). $1 task, $2 tenant, $3 after, $4 through, $5 page. */
const TASK_PAGE = `SELECT e.id::text AS id, e.task_id, e.tenant_id, t.queue_id, t.workflow_id, e.from_status, e.to_status, e.at
  FROM task_events e
  ${taskOfEvent()}
 WHERE e.task_id = $1 AND e.tenant_id = $2 AND e.id > $3::bigint AND e.id <= $4::bigint
 ORDER BY e.id LIMIT $5`;

/**
 * A tenant's or a queue's events: events carry no index by tenant (it cost
 * every event an entry on the hot path), so a page is the next $5 ids of the
 * whole log, walked on the primary key, of which the tenant's are answered
 * with their task's queue and workflow. The one-row head answers where the
 * page ended even when none of it was the tenant's. At most $6 are
 * answered, as a task's page: the page then ends at the last of them.
 * $1 tenant, $2 queue or null, $3 after, $4 through, $5 ids walked, $6 events.
 */
const LOG_PAGE = `WITH w AS (
    SELECT ev.id, ev.task_id, ev.tenant_id, ev.from_status, ev.to_status, ev.at
      FROM task_events ev WHERE ev.id > $3::bigint AND ev.id <= $4::bigint ORDER BY ev.id LIMIT $5
  )
  SELECT r.id::text AS id, h.read_to, r.task_id, r.tenant_id, r.queue_id, r.workflow_id, r.from_status, r.to_status, r.at
  FROM (SELECT CASE WHEN count(*) < $5 THEN $4::bigint ELSE max(w.id) END::text AS read_to FROM w) h
  LEFT JOIN LATERAL (
    SELECT e.*, t.queue_id, t.workflow_id FROM w e ${taskOfEvent()}
     WHERE e.tenant_id = $1 AND ($2::text IS NULL OR t.queue_id = $2)
     ORDER BY e.id LIMIT $6
  ) r ON true
 ORDER BY r.id`;

/** Events per page: a page is held in the gateway until its subscriber has taken it. */
export const REPLAY_PAGE = 500;
/** Ids of the whole log walked per page of a tenant's or a queue's replay. */
export const REPLAY_LOG_PAGE = 5_000;

/** The filter's events with ids in (after, through], the first page of them. */
export async function readReplayPage(client: Queryable, filter: ReplayFilter, after: bigint, through: bigint): Promise<ReplayPage> {
  if (through <= after) return { events: [], readTo: through };
  if (filter.taskId !== null) {
    const res = await client.query<ReplayRow>(prepared(TASK_PAGE, [filter.taskId, filter.tenantId, after.toString(), through.toString(), REPLAY_PAGE]));
    return pageOf(res.rows, through);
  }
  const res = await client.query<ReplayRow & { read_to: string }>(
    prepared(LOG_PAGE, [filter.tenantId, filter.queueId, after.toString(), through.toString(), REPLAY_LOG_PAGE, REPLAY_PAGE]),
  );
  const head = res.rows[0];
  if (head === undefined) throw new Error("replay page query returned no row");
  return pageOf(res.rows, BigInt(head.read_to));
}

/** A full page ends at its last event; a shorter one read everything up to `readTo`. */
function pageOf(rows: readonly ReplayRow[], readTo: bigint): ReplayPage {
  const events = rows.flatMap((r) => (r.id === null ? [] : [taskEventRowOf(r.id, r)]));
  const last = events.at(-1);
  return { events, readTo: events.length === REPLAY_PAGE && last !== undefined ? BigInt(last.id) : readTo };
}

/**
 * The highest event id ever drawn (the id sequence's last value; 0 before
 * the first event): a cursor above it names no event. Read from the sequence,
 * not max(id), which falls when the newest events go with their tasks (a
 * deleted queue) and would refuse a cursor a subscriber rightly holds.
 */
export async function newestTaskEventId(client: Queryable): Promise<bigint> {
  const res = await client.query<{ last: string | null }>(`SELECT pg_sequence_last_value(pg_get_serial_sequence('task_events', 'id'))::text AS last`);
  return BigInt(res.rows[0]?.last ?? "0");
}
