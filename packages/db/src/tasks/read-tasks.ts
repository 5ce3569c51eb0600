import { isWellFormedId, taskCursor, TaskStatus } from "@tasklane/core";
import type { Database, Queryable } from "../database.js";
import { tenantTaskCount } from "../stats/queue-counters.js";
import { PAGE_BODY_BYTES, bodyBytesOf, budgetedPageSql, hasMoreThan } from "./page-body-budget.js";
import { TASK_COLUMNS, mapAttemptRow, mapTaskRow, type AttemptRecord, type TaskRecord } from "./task-record.js";

export interface TaskFilter {
  status?: TaskStatus[] | null;
  type?: string | null;
  queue?: string | null;
  workflowId?: string | null;
  scheduleId?: string | null;
  createdAfter?: Date | null;
  createdBefore?: Date | null;
}

export interface Page {
  first: number;
  after?: string | null;
  /** Payloads and results the page may hold: PAGE_BODY_BYTES, or less when the answer has spent some (aliases); at least one task whatever it is. */
  bodyBytes?: number;
}

export interface TaskPage {
  nodes: TaskRecord[];
  hasNextPage: boolean;
  endCursor: string | null;
  totalCount: number;
  /** Bytes of payloads and results the page holds (what the answer spent on it). */
  bodyBytes: number;
}

/** The body budget of `page`: its own bodyBytes, never above PAGE_BODY_BYTES. */
export const pageBodyBudget = (page: Page): number => Math.min(PAGE_BODY_BYTES, Math.max(0, page.bodyBytes ?? PAGE_BODY_BYTES));

/** Null when absent or another tenant's: the two are indistinguishable to the caller. */
export async function getTask(db: Database | { pool: Queryable }, tenantId: string, id: string): Promise<TaskRecord | null> {
  if (!isWellFormedId("task", id)) return null;
  const res = await db.pool.query(
    `SELECT ${TASK_COLUMNS} FROM tasks t JOIN queues q ON q.id = t.queue_id WHERE t.id = $1 AND t.tenant_id = $2`,
    [id, tenantId],
  );
  return res.rows[0] ? mapTaskRow(res.rows[0]) : null;
}

/** The tenant's tasks among `ids`, in one read, by id; an id absent or another tenant's is simply not in the map. */
export async function getTasks(db: Database | { pool: Queryable }, tenantId: string, ids: readonly string[]): Promise<Map<string, TaskRecord>> {
  const wellFormed = [...new Set(ids)].filter((id) => isWellFormedId("task", id));
  if (wellFormed.length === 0) return new Map();
  const res = await db.pool.query(
    `SELECT ${TASK_COLUMNS} FROM tasks t JOIN queues q ON q.id = t.queue_id WHERE t.id = ANY($1::text[]) AND t.tenant_id = $2`,
    [wellFormed, tenantId],
  );
  return new Map(res.rows.map((r) => [r.id as string, mapTaskRow(r)]));
}

/**
 * Newest first. Ids are time-ordered (UUIDv7), so the keyset is the id alone
 * and a page costs one index range scan per status however deep it is.
 *
 * The only index that leads with the tenant and orders by id is
 * (tenant_id, status, id DESC): a (tenant_id, id DESC) index took an entry on
 * each of a task's three row versions (no status change is a HOT update), ~7%
 * of what a task cost Postgres, to serve this list alone (migration
 * task_list_by_status). So a page over several statuses reads each status's
 * range from its cursor, at most a page from each, and merges them by id.
 * A page also ends before its payloads and results pass PAGE_BODY_BYTES
 * (page-body-budget.ts).
 */
export async function listTasks(db: Database | { pool: Queryable }, tenantId: string, filter: TaskFilter, page: Page): Promise<TaskPage> {
  const where = ["t.tenant_id = $1"];
  const params: unknown[] = [tenantId];
  const param = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  const add = (sql: string, value: unknown) => where.push(sql.replace("?", param(value)));
  if (filter.type != null) add("t.type = ?", filter.type);
  // The queue by id, not by the joined name: a name shared by every tenant ('default') made the
  // planner guess a handful of matches and sort the whole filtered set instead of walking an index.
  if (filter.queue != null) add("t.queue_id = (SELECT id FROM queues WHERE tenant_id = $1 AND name = ?)", filter.queue);
  if (filter.workflowId != null) add("t.workflow_id = ?", filter.workflowId);
  if (filter.scheduleId != null) add("t.schedule_id = ?", filter.scheduleId);
  if (filter.createdAfter != null) add("t.created_at > ?", filter.createdAfter);
  if (filter.createdBefore != null) add("t.created_at < ?", filter.createdBefore);
  const chosen = filter.status?.length ? [...new Set(filter.status)] : null;
  const statuses = chosen ?? Object.values(TaskStatus);
  // Only statuses and a queue: the queue counters know the total, and no task row is counted.
  const counting = filteredByStatusAndQueueOnly(filter)
    ? tenantTaskCount(db.pool, tenantId, filter.queue ?? null, chosen)
    : countRows(db.pool, where, params, chosen);
  if (page.after) {
    const afterId = taskCursor.decode(page.after);
    // The API refuses unreadable cursors; here one reads as "past the end", never as "from the start".
    add("t.id < ?", afterId ?? "");
  }
  const limit = param(page.first + 1);
  // One status as an equality each: Postgres 15 reads (tenant_id, status, id DESC) in id order
  // only when no column before id is matched by ANY, so each range stops after a page.
  const ranges = statuses.map(
    (status) => `(SELECT t.* FROM tasks t WHERE ${where.join(" AND ")} AND t.status = ${param(status)}::"TaskStatus"
       ORDER BY t.id DESC LIMIT ${limit})`,
  );
  const candidates = `SELECT ${TASK_COLUMNS} FROM (${ranges.join(" UNION ALL ")}) t JOIN queues q ON q.id = t.queue_id
       ORDER BY t.id DESC LIMIT ${limit}`;
  const [rows, totalCount] = await Promise.all([
    db.pool.query(budgetedPageSql(candidates, "id DESC", param(page.first), param(pageBodyBudget(page))), params),
    counting,
  ]);
  const nodes = rows.rows.map(mapTaskRow);
  const last = nodes[nodes.length - 1];
  return {
    nodes,
    hasNextPage: hasMoreThan(rows.rows),
    endCursor: last ? taskCursor.encode(last.id) : null,
    totalCount,
    bodyBytes: bodyBytesOf(rows.rows),
  };
}

/** A filter no other field of which is set (a field added to TaskFilter later counts rows). */
const filteredByStatusAndQueueOnly = (filter: TaskFilter) =>
  Object.entries(filter).every(([field, value]) => value == null || field === "status" || field === "queue");

/** The rows the filters match, counted; the chosen statuses as one ANY (a count needs no order). */
async function countRows(db: Queryable, where: readonly string[], params: readonly unknown[], statuses: TaskStatus[] | null): Promise<number> {
  const values = [...params];
  const conditions = [...where, ...(statuses === null ? [] : [`t.status = ANY($${values.push(statuses)}::"TaskStatus"[])`])];
  const res = await db.query<{ n: string }>(`SELECT count(*) AS n FROM tasks t WHERE ${conditions.join(" AND ")}`, values);
  return Number(res.rows[0]?.n ?? 0);
}

/** Attempt history of many tasks in one query (no N+1 across a list). */
export async function listAttempts(db: Database, taskIds: string[]): Promise<Map<string, AttemptRecord[]>> {
  const out = new Map<string, AttemptRecord[]>(taskIds.map((id) => [id, []]));
  if (taskIds.length === 0) return out;
  const res = await db.pool.query(
    `SELECT task_id, number, worker_id, lease_token, started_at, finished_at, outcome, error
     FROM task_attempts WHERE task_id = ANY($1::text[]) ORDER BY task_id, id`,
    [taskIds],
  );
  for (const row of res.rows) out.get(row.task_id as string)?.push(mapAttemptRow(row));
  return out;
}
