/**
 * The dead-letter queue a batch at a time (redriveDeadTasks, discardDeadTasks):
 * the part both bulk transitions share. Each statement is its own
 * transaction over at most DEAD_LETTER_STATEMENT_BATCH tasks, so redriving
 * 10,000 never holds 10,000 row locks nor one long transaction; the statement
 * itself is the single-task transition's (redriveCtes, discardCtes) over a
 * different candidate clause.
 *
 * Candidates are the tenant's DEAD tasks that died when the call began or
 * earlier, the one that died first first, read from tasks_dead_letter_idx
 * (tenant_id, completed_at DESC, id DESC WHERE status = 'DEAD'; walked
 * backwards) or, for one queue, tasks_dead_letter_queue_idx (the same led by
 * queue_id: through the tenant's index each statement read every dead task of
 * the tenant's other queues to find the queue's). Locked with SKIP LOCKED and
 * each re-checked DEAD on the locked row, so a concurrent bulk call or
 * single redrive never changes a task twice: the one that got it first wins,
 * the other passes it by. The cutoff keeps one call from meeting again a task
 * it redrove that died again before the call ended (its completed_at is then
 * later), which would redrive it twice and count it twice.
 */
import { NotFoundError } from "@tasklane/core";
import type pg from "pg";
import { withTransaction, type Database, type Queryable } from "../database.js";

/** Tasks per statement (and transaction). @defaultValue 500 */
export const DEAD_LETTER_STATEMENT_BATCH = 500;

/** What one bulk call did. */
export interface DeadLetterBatchResult {
  /** Tasks changed. */
  count: number;
  /** Whether tasks the call could have changed remain (a client calls again until false). */
  hasMore: boolean;
}

export interface DeadLetterBatchOptions {
  /** Only this queue's dead tasks (by name); null: every queue. An unknown name is NOT_FOUND, nothing changed. */
  queue: string | null;
  /** At most this many tasks in all. */
  max: number;
  /** The audit events' actor. */
  actor: string;
  /**
   * Asked before each statement with the tasks it may change; false stops
   * the call there (hasMore true). `done`: tasks changed so far.
   */
  beforeBatch?(size: number, done: number): boolean;
  /** Tasks per statement. @defaultValue DEAD_LETTER_STATEMENT_BATCH */
  statementBatch?: number;
}

/** Where a bulk call looks: the queue's id (null: all) and the cutoff, as Postgres's own text of its now(). */
export interface DeadLetterScope {
  queueId: string | null;
  diedBy: string;
}

/** Resolves the queue name (NOT_FOUND for a name the tenant has no queue by) and takes the cutoff. */
export async function deadLetterScope(q: Queryable, tenantId: string, queue: string | null): Promise<DeadLetterScope> {
  const res = await q.query<{ queue_id: string | null; died_by: string }>(
    `SELECT (SELECT id FROM queues WHERE tenant_id = $1 AND name = $2) AS queue_id, now()::text AS died_by`,
    [tenantId, queue],
  );
  const row = res.rows[0]!;
  if (queue !== null && row.queue_id === null) throw new NotFoundError("Queue", queue);
  return { queueId: row.queue_id, diedBy: row.died_by };
}

/**
 * CTE `found`: up to batch + 1 candidates, locked, skipping locked ones.
 * Parameters: $1 tenant, $2 cutoff, $3 batch; the queue id at `queueParam`
 * when filtered. Exposes id, from_status, completed_at.
 */
export function deadLetterCandidatesCte(opts: { withWorkflowTasks: boolean; queueParam: string | null }): string {
  const where = ["t.tenant_id = $1", "t.status = 'DEAD'", "t.completed_at <= $2::timestamptz"];
  if (!opts.withWorkflowTasks) where.push("t.workflow_id IS NULL");
  if (opts.queueParam !== null) where.push(`t.queue_id = ${opts.queueParam}`);
  return `found AS (
      SELECT t.id, t.status AS from_status, t.completed_at FROM tasks t
      WHERE ${where.join(" AND ")}
      ORDER BY t.completed_at, t.id LIMIT $3::int + 1 FOR UPDATE OF t SKIP LOCKED
    )`;
}

/**
 * Runs one batch statement in its own transaction, planned as an ordered
 * walk of tasks_dead_letter_idx (tasks_dead_letter_queue_idx with a queue)
 * that stops after batch + 1 rows. Left to its
 * estimates the planner read every DEAD task of the tenant through
 * tasks_tenant_id_status_id_idx and sorted them, for each statement: a
 * queue's share of the tenant's tasks says nothing of its share of the dead
 * ones (an outage kills one queue's tasks), and 300 dead of a queue holding
 * 1.5% of 20,000 tasks were estimated at 9 rows, under the LIMIT. That is
 * O(dead tasks) per 500 redriven. With sorts priced out, the only plans
 * left that yield the ORDER BY walk the index (the sort of `found`'s 501
 * rows has no alternative, so it stays).
 */
export async function runBatchStatement(db: Database, sql: string, params: unknown[]): Promise<pg.QueryResult> {
  return withTransaction(db.pool, async (client) => {
    await client.query("SET LOCAL enable_sort = off");
    return client.query(sql, params);
  });
}

/** The candidates a statement changes: the first `batch` of `found` (the one past them only says more remain). */
export const DEAD_LETTER_BATCH_CANDIDATES = "SELECT f.id, f.from_status FROM found f ORDER BY f.completed_at, f.id LIMIT $3::int";

/** A column of the final SELECT: how many `found` held, to tell whether more remain. */
export const FOUND_COUNT = "(SELECT count(*)::int FROM found) AS found";

/**
 * Runs `statement` a batch at a time until `max` tasks changed or none
 * remain. Each statement answers how many it changed and how many it found
 * (up to batch + 1).
 */
export async function inDeadLetterBatches(
  options: Pick<DeadLetterBatchOptions, "max" | "beforeBatch" | "statementBatch">,
  statement: (batch: number) => Promise<{ changed: number; found: number }>,
): Promise<DeadLetterBatchResult> {
  const per = options.statementBatch ?? DEAD_LETTER_STATEMENT_BATCH;
  let count = 0;
  for (;;) {
    const batch = Math.min(per, options.max - count);
    if (options.beforeBatch && !options.beforeBatch(batch, count)) return { count, hasMore: true };
    const { changed, found } = await statement(batch);
    count += changed;
    const more = found > batch;
    // changed 0 with more found cannot happen (found rows are locked DEAD); never loop on it.
    if (!more || count >= options.max || changed === 0) return { count, hasMore: more };
  }
}
