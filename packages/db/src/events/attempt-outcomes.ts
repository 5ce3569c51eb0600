import type { Queryable } from "../database.js";

/** Finished attempts of one queue within one time bucket. */
export interface AttemptOutcomeCount {
  queue: string;
  /** 0 for the bucket starting at `since`, then one per `bucketMs`. */
  bucket: number;
  succeeded: number;
  failed: number;
}

/**
 * A tenant's finished attempts since `since`, per queue and time bucket, from
 * the audit trail: a success is a RUNNING -> SUCCEEDED event, a failure
 * RUNNING -> RETRYING or DEAD. The WHERE clause repeats the predicate of the
 * partial index task_events_outcome_at_idx word for word, so the planner can
 * prove the index covers it: the index holds one entry per finished attempt,
 * not one per event (migration task_event_outcome_index).
 */
export async function countAttemptOutcomes(q: Queryable, tenantId: string, since: Date, bucketMs: number): Promise<AttemptOutcomeCount[]> {
  const res = await q.query<AttemptOutcomeCount>(
    `SELECT q.name AS queue,
            floor(extract(epoch FROM e.at - $2::timestamptz) * 1000 / $3)::int AS bucket,
            count(*) FILTER (WHERE e.to_status = 'SUCCEEDED')::int AS succeeded,
            count(*) FILTER (WHERE e.to_status <> 'SUCCEEDED')::int AS failed
       FROM task_events e
       JOIN tasks t ON t.id = e.task_id
       JOIN queues q ON q.id = t.queue_id
      WHERE e.tenant_id = $1 AND e.at >= $2::timestamptz
        AND e.from_status = 'RUNNING' AND e.to_status IN ('SUCCEEDED', 'RETRYING', 'DEAD')
      GROUP BY 1, 2`,
    [tenantId, since, bucketMs],
  );
  return res.rows;
}
