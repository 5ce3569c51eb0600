import { deadLetterCursor, TaskStatus } from "@tasklane/core";
import type { Database, Queryable } from "../database.js";
import { tenantTaskCount } from "../stats/queue-counters.js";
import { pageBodyBudget, type Page, type TaskPage } from "./read-tasks.js";
import { bodyBytesOf, budgetedPageSql, hasMoreThan } from "./page-body-budget.js";
import { TASK_COLUMNS, mapTaskRow } from "./task-record.js";

/**
 * The dead-letter queue, the task that died last first (completed_at is when
 * it went DEAD; ties by id, newest first), a page at a time from a keyset
 * cursor on (completed_at, id). Read from tasks_dead_letter_idx, a partial
 * index holding DEAD tasks only, so it costs nothing on the hot path (a task
 * enters it when it dies) and a page stops after `first` rows whatever the
 * backlog. `queue` narrows it to one queue of the tenant, read from
 * tasks_dead_letter_queue_idx (the same led by queue_id), so a queue's page
 * does not walk the other queues' dead tasks. A page also ends
 * before its payloads and results pass PAGE_BODY_BYTES (page-body-budget.ts).
 */
export async function listDeadTasks(db: Database | { pool: Queryable }, tenantId: string, queue: string | null, page: Page): Promise<TaskPage> {
  const params: unknown[] = [tenantId, page.first + 1];
  const where = ["t.tenant_id = $1", "t.status = 'DEAD'"];
  if (queue !== null) where.push(`t.queue_id = (SELECT id FROM queues WHERE tenant_id = $1 AND name = $${params.push(queue)})`);
  if (page.after) {
    // The API refuses unreadable cursors; here one reads as "past the end", never as "from the start".
    const after = deadLetterCursor.decode(page.after);
    if (after === null) return { nodes: [], hasNextPage: false, endCursor: null, totalCount: await tenantTaskCount(db.pool, tenantId, queue, [TaskStatus.DEAD]), bodyBytes: 0 };
    where.push(`(t.completed_at, t.id) < ($${params.push(after.completedAt)}::timestamptz, $${params.push(after.taskId)})`);
  }
  const candidates = `SELECT ${TASK_COLUMNS} FROM tasks t JOIN queues q ON q.id = t.queue_id
       WHERE ${where.join(" AND ")}
       ORDER BY t.completed_at DESC, t.id DESC LIMIT $2`;
  const [rows, totalCount] = await Promise.all([
    db.pool.query(budgetedPageSql(candidates, "completed_at DESC, id DESC", `$${params.push(page.first)}`, `$${params.push(pageBodyBudget(page))}`), params),
    tenantTaskCount(db.pool, tenantId, queue, [TaskStatus.DEAD]),
  ]);
  const nodes = rows.rows.map(mapTaskRow);
  const last = nodes[nodes.length - 1];
  return {
    nodes,
    hasNextPage: hasMoreThan(rows.rows),
    endCursor: last ? deadLetterCursor.encode(last.completedAt as Date, last.id) : null,
    totalCount,
    bodyBytes: bodyBytesOf(rows.rows),
  };
}
