import { IdPrefix, NotFoundError, OverlapPolicy, isWellFormedId } from "@tasklane/core";
import { withTransaction, type Database } from "../database.js";
import type { DispatchIntent } from "../outbox/dispatch-intent.js";
import { insertTasks, type SubmitOptions } from "../tasks/submit-tasks.js";
import type { TaskRecord } from "../tasks/task-record.js";
import { scheduleOrderingKey } from "./materialise-occurrences.js";
import { SCHEDULE_COLUMNS, mapScheduleRow } from "./schedule-record.js";

/**
 * A run now, outside the cron: a task of the schedule without an occurrence
 * key. It is one of the schedule's runs for its overlap policy: under QUEUE it
 * takes its turn on the schedule's ordering key like the cron's runs (it
 * started beside a cron run still going, and a cron run beside it), and SKIP
 * and CANCEL_RUNNING see it as the previous run (they look at every
 * unfinished run of the schedule).
 */
export async function triggerSchedule(
  db: Database,
  tenantId: string,
  id: string,
  horizonMs: number,
  /** Who asked (the audit actor) and how the run's trace starts (see SubmitOptions). */
  options: Pick<SubmitOptions, "actor" | "newTraceParent"> = {},
): Promise<{ task: TaskRecord; dispatch: DispatchIntent[] }> {
  if (!isWellFormedId(IdPrefix.schedule, id)) throw new NotFoundError("Schedule", id);
  return withTransaction(db.pool, async (client) => {
    const res = await client.query(`SELECT ${SCHEDULE_COLUMNS}, now() AS db_now FROM schedules WHERE id = $1 AND tenant_id = $2 AND deleted_at IS NULL`, [id, tenantId]);
    if (!res.rows[0]) throw new NotFoundError("Schedule", id);
    const s = mapScheduleRow(res.rows[0]);
    const t = s.template;
    const { tasks, dispatch } = await insertTasks(
      client,
      tenantId,
      [
        {
          type: t.type,
          queue: t.queue,
          payload: t.payload ?? null,
          priority: t.priority,
          runAt: res.rows[0].db_now as Date,
          maxAttempts: t.maxAttempts,
          backoff: t.backoff,
          timeoutSeconds: t.timeoutSeconds,
          idempotencyKey: null,
          orderingKey: s.overlapPolicy === OverlapPolicy.QUEUE ? scheduleOrderingKey(s.id) : null,
          callbackUrl: null,
          metadata: null,
          scheduleId: s.id,
        },
      ],
      { horizonMs, actor: "api:triggerSchedule", ...options },
    );
    return { task: tasks[0] as TaskRecord, dispatch };
  });
}
