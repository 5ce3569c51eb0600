/**
 * A FROM item (`lane`, then `first_due` with one column, run_at): for each
 * priority lane of the queue `queueId` (an SQL expression), its waiting task
 * (QUEUED, SCHEDULED or RETRYING) that matches `condition` (on `t`) with the
 * earliest run_at. Each lane is read in run_at order from its own stretch of
 * tasks_runnable_lane_idx and stops at its first match, so min(first_due.run_at)
 * costs a few index probes however long the queue's backlog is. Lanes with no
 * match give no row.
 */
export const firstInWaitingLanes = (queueId: string, condition: string) =>
  `(VALUES ('HIGH'::"Priority"), ('NORMAL'::"Priority"), ('LOW'::"Priority")) AS lane(priority)
   CROSS JOIN LATERAL (
     SELECT t.run_at FROM tasks t
      WHERE t.queue_id = ${queueId} AND t.priority = lane.priority AND t.status IN ('QUEUED', 'SCHEDULED', 'RETRYING')
        AND ${condition}
      ORDER BY t.run_at LIMIT 1) first_due`;
