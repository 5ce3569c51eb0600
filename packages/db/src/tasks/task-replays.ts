/**
 * Task.replayOf: which task each of `taskIds` replays (tasks.replay_of,
 * migration tasks_replay_of). Read apart from TASK_COLUMNS, by the field's
 * own loader, so no task read of the hot path (submissions, leases,
 * completions) carries the column: only an answer asking for replayOf reads
 * it, one statement for all the tasks of the answer.
 */
import type { Queryable } from "../database.js";

/** The replayed task of each of `taskIds` the tenant owns and that is a replay; the rest are absent. */
export async function readReplayOf(db: { pool: Queryable }, tenantId: string, taskIds: readonly string[]): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  if (taskIds.length === 0) return found;
  const res = await db.pool.query<{ id: string; replay_of: string }>(
    "SELECT t.id, t.replay_of FROM tasks t WHERE t.id = ANY($1::text[]) AND t.tenant_id = $2 AND t.replay_of IS NOT NULL",
    [taskIds, tenantId],
  );
  for (const row of res.rows) found.set(row.id, row.replay_of);
  return found;
}
