import type { Queryable } from "../database.js";

/** The cursor row of the task-event relay. */
export const TASK_EVENT_STREAM = "task-events";

/**
 * The last event id the relay published. On the very first start there is no
 * row: the relay begins at the newest event rather than pushing the whole
 * history to subscribers who were never connected to see it live.
 */
export async function loadRelayCursor(client: Queryable, stream = TASK_EVENT_STREAM): Promise<bigint> {
  const res = await client.query<{ last_event_id: string }>(
    `WITH ins AS (
       INSERT INTO event_relay_cursors (name, last_event_id)
       SELECT $1, COALESCE((SELECT max(id) FROM task_events), 0)
       ON CONFLICT (name) DO NOTHING
       RETURNING last_event_id
     )
     SELECT last_event_id::text FROM ins
     UNION ALL
     SELECT last_event_id::text FROM event_relay_cursors WHERE name = $1
     LIMIT 1`,
    [stream],
  );
  const value = res.rows[0]?.last_event_id;
  if (value === undefined) throw new Error(`relay cursor ${stream} could not be created`);
  return BigInt(value);
}

/** Only ever moves forward, so a stale relay that lost its lock cannot rewind a newer one. */
export async function saveRelayCursor(client: Queryable, lastEventId: bigint, stream = TASK_EVENT_STREAM): Promise<void> {
  await client.query(
    `UPDATE event_relay_cursors SET last_event_id = $2::bigint, updated_at = now()
      WHERE name = $1 AND last_event_id < $2::bigint`,
    [stream, lastEventId.toString()],
  );
}

/**
 * The relay's cursor without creating it: null while no relay has started.
 * The relay moves it only after publishing, so every event up to it has been
 * published and its id is final.
 */
export async function readRelayCursor(client: Queryable, stream = TASK_EVENT_STREAM): Promise<bigint | null> {
  const res = await client.query<{ last_event_id: string }>(`SELECT last_event_id::text FROM event_relay_cursors WHERE name = $1`, [stream]);
  const value = res.rows[0]?.last_event_id;
  return value === undefined ? null : BigInt(value);
}
