import {
  BadUserInputError,
  IdPrefix,
  NotFoundError,
  StaleLeaseError,
  decideAfterFailure,
  isWellFormedId,
  parseLeaseToken,
  startRateOf,
  type StartRate,
} from "@tasklane/core";
import { prepared, withTransaction, type Database } from "../database.js";
import type { DispatchIntent } from "../outbox/dispatch-intent.js";
import { queueTasksIn } from "../stats/queue-counters.js";
import { firstInWaitingLanes } from "../tasks/waiting-lanes.js";
import type { TaskRecord } from "../tasks/task-record.js";
import {
  completeAttempts,
  completeAttemptsQuietly,
  completeLeasedPlainTasks,
  failAttempt,
  type Completion,
  type LeaseCompletion,
  type TasksAnswer,
} from "../transitions/finish-attempts.js";
import { extendLease, type HeartbeatOutcome } from "../transitions/heartbeat.js";
import { startAttemptsFromQueue, startAttemptsFromQueueIn, type StartedAttempt } from "../transitions/start-attempts.js";

export interface LeaseRequest {
  queue: string;
  workerId: string;
  max: number;
  leaseSeconds: number;
  agingSeconds: number;
  /** Also lease tasks due within this many ms; the worker holds each until its runAt (StartedAttempt.startInMs). */
  startAheadMs?: number;
  /** Lease nothing unless a waiting task is due within this many ms (StartOptions.onceDueWithinMs). */
  onceDueWithinMs?: number | null;
}

/** What leasing needs to know of a queue (the gateway keeps it for a second: PullQueueCache). */
export interface PullQueue {
  id: string;
  mode: string;
  concurrency: number | null;
  /** The tenant's maxConcurrency. */
  maxConcurrency: number | null;
  /** The queue's start rate, when it has one. */
  rate: StartRate | null;
}

/** The tenant's queue of that name with its limits, or null when it has none. */
export async function readPullQueue(db: Database, tenantId: string, name: string): Promise<PullQueue | null> {
  const res = await db.pool.query<{
    id: string;
    mode: string;
    concurrency: number | null;
    max_concurrency: number | null;
    rate_limit_per_second: number | null;
    rate_limit_burst: number | null;
  }>(
    prepared(
      `SELECT q.id, q.mode, q.concurrency, t.max_concurrency, q.rate_limit_per_second, q.rate_limit_burst
       FROM queues q JOIN tenants t ON t.id = q.tenant_id
       WHERE q.tenant_id = $1 AND q.name = $2`,
      [tenantId, name],
    ),
  );
  const row = res.rows[0];
  if (!row) return null;
  return {
    id: row.id,
    mode: row.mode,
    concurrency: row.concurrency,
    maxConcurrency: row.max_concurrency,
    rate: startRateOf(row.rate_limit_per_second, row.rate_limit_burst),
  };
}

/**
 * Leases up to `max` runnable tasks of one of the tenant's PULL queues (as
 * readPullQueue found it; null: there is none); empty when none is runnable
 * now. The queue's concurrency and the tenant's maxConcurrency (RUNNING tasks
 * of every mode, the same number Tenant.usage reports) hold exactly: with a
 * limit set, leases of that queue/tenant take the row lock first and count
 * under it, so concurrent leases cannot overshoot.
 */
export async function leaseFromPullQueue(db: Database, tenantId: string, queue: PullQueue | null, req: LeaseRequest): Promise<StartedAttempt[]> {
  if (!queue) throw new NotFoundError("Queue", req.queue);
  if (queue.mode !== "PULL") throw new BadUserInputError(`Queue "${req.queue}" is a PUSH queue; only PULL queues are leased`);
  const options = {
    workerId: req.workerId,
    leaseMs: req.leaseSeconds * 1000,
    actor: `worker:${req.workerId}`,
    startAheadMs: req.startAheadMs,
    onceDueWithinMs: req.onceDueWithinMs ?? null,
  };
  if (queue.concurrency === null && queue.maxConcurrency === null) {
    return startAttemptsFromQueue(db, queue.id, req.max, req.agingSeconds, options);
  }
  return withTransaction(db.pool, async (client) => {
    let allowed = req.max;
    if (queue.maxConcurrency !== null) {
      const t = await client.query("SELECT max_concurrency FROM tenants WHERE id = $1 FOR UPDATE", [tenantId]);
      const running = await client.query("SELECT count(*)::int AS n FROM tasks WHERE tenant_id = $1 AND status = 'RUNNING'", [tenantId]);
      const limit = t.rows[0]?.max_concurrency as number | null;
      if (limit !== null && limit !== undefined) allowed = Math.min(allowed, limit - (running.rows[0].n as number));
    }
    if (queue.concurrency !== null) {
      const q = await client.query("SELECT concurrency FROM queues WHERE id = $1 FOR UPDATE", [queue.id]);
      const running = await queueTasksIn(client, queue.id, "RUNNING");
      const limit = q.rows[0]?.concurrency as number | null;
      if (limit !== null && limit !== undefined) allowed = Math.min(allowed, limit - running);
    }
    if (allowed <= 0) return [];
    return startAttemptsFromQueueIn(client, queue.id, allowed, req.agingSeconds, options);
  });
}

/**
 * Milliseconds until the queue's next waiting task falls due (less
 * `startAheadMs`: when it can be leased ahead), or null when
 * none is waiting for its time. A long-polling lease sleeps exactly that
 * long: delayed tasks and retries ring no doorbell, and polling for them on a
 * fixed interval made them start up to an interval late. Tasks already due
 * but not leasable (ordering key busy, queue paused) are left to the doorbell.
 */
export async function msUntilNextDue(db: Database, queueId: string, startAheadMs = 0): Promise<number | null> {
  const res = await db.pool.query<{ ms: number | null }>(
    // One index probe per priority lane (tasks_runnable_lane_idx), whatever the backlog.
    prepared(
      `SELECT (extract(epoch FROM min(first_due.run_at) - now()) * 1000)::float8 - $2::float8 AS ms
       FROM ${firstInWaitingLanes("$1", "t.run_at > now() + $2::float8 * interval '1 millisecond'")}`,
      [queueId, startAheadMs],
    ),
  );
  return res.rows[0]?.ms ?? null;
}

/** The generation a token names, or the same refusal a stale token gets (no oracle for token shapes). */
function generationOf(token: string): number {
  const parsed = parseLeaseToken(token);
  if (!parsed) throw new StaleLeaseError();
  return parsed.generation;
}

function assertTaskId(taskId: string): void {
  if (!isWellFormedId(IdPrefix.task, taskId)) throw new NotFoundError("Task", taskId);
}

/** The audit actor of a PULL outcome: the worker that holds the lease, as it named itself in leaseTasks. */
function pullActor(lease: { worker_id?: unknown }): string {
  return typeof lease.worker_id === "string" ? `worker:${lease.worker_id}` : "worker";
}

/** Token must be the task's current one; another tenant's task reads as not found. */
async function currentLease(db: Database, tenantId: string, taskId: string, token: string) {
  const res = await db.pool.query(
    `SELECT lease_token, lease_generation, status, workflow_id, worker_id, attempts, max_attempts, backoff_strategy, backoff_delay_seconds,
            backoff_max_delay_seconds, backoff_jitter
     FROM tasks WHERE id = $1 AND tenant_id = $2`,
    [taskId, tenantId],
  );
  const row = res.rows[0];
  if (!row) throw new NotFoundError("Task", taskId);
  if (row.lease_token !== token || row.lease_generation !== generationOf(token)) throw new StaleLeaseError();
  return row;
}

export async function heartbeatLease(db: Database, tenantId: string, taskId: string, token: string, extendSeconds: number): Promise<HeartbeatOutcome> {
  assertTaskId(taskId);
  await currentLease(db, tenantId, taskId, token);
  const outcome = await extendLease(db, tenantId, taskId, generationOf(token), extendSeconds * 1000);
  if (!outcome) throw new StaleLeaseError();
  return outcome;
}

/**
 * One item of completeLeases: recorded (with the task as it is now, when
 * asked for), or why it was refused (as completeLease would have thrown).
 */
export type LeaseCompletionOutcome = { taskId: string; task?: TaskRecord } | { taskId: string; refused: "NOT_FOUND" | "CONFLICT" };

/**
 * completeTask for many leases at once: one completion statement for the
 * whole batch when its tasks are plain (no workflow, no ordering key) and
 * their leases current, where one call per task spends most of its time on
 * the round trip. Each item is fenced by its own token; a refused item does
 * not affect the others.
 */
export async function completeLeases(
  db: Database,
  tenantId: string,
  items: LeaseCompletion[],
  horizonMs: number,
  /**
   * Whether recorded outcomes carry their task (true: whole), and how: false,
   * the statements answer with ids only; "bodiless", without payload and
   * result (an outcome's span); a BodyBudget, whole but for bodies past its
   * bytes, which it is lowered by (an answer carrying the tasks).
   */
  withTasks: boolean | TasksAnswer = true,
): Promise<{ outcomes: LeaseCompletionOutcome[]; dispatch: DispatchIntent[]; releasedQueueIds: string[] }> {
  const answer = withTasks === true ? "tasks" : withTasks === false ? "ids" : withTasks;
  const wellFormed = items.filter((i) => isWellFormedId(IdPrefix.task, i.taskId));
  // Plain tasks under their current lease, the steady state, need no lookup first.
  const plain = await completeLeasedPlainTasks(db, tenantId, wellFormed, answer);
  const recorded = new Map<string, TaskRecord | undefined>(plain.ids.map((id) => [id, undefined]));
  for (const task of plain.accepted) recorded.set(task.id, task);
  const rest = items.filter((i) => !recorded.has(i.taskId));
  const general = rest.length === 0 ? { outcomes: [], dispatch: [], releasedQueueIds: [] } : await completeLooked(db, tenantId, rest, horizonMs, answer);
  const others = new Map(general.outcomes.map((o) => [o.taskId, o]));
  const outcomes = items.map((item): LeaseCompletionOutcome => {
    if (!recorded.has(item.taskId)) return others.get(item.taskId) ?? { taskId: item.taskId, refused: "CONFLICT" };
    const task = recorded.get(item.taskId);
    return task ? { taskId: item.taskId, task } : { taskId: item.taskId };
  });
  const refused = items.filter((_, i) => {
    const o = outcomes[i] as LeaseCompletionOutcome;
    return "refused" in o && o.refused === "CONFLICT";
  });
  const freed = refused.length === 0 ? [] : await endCancelledLeases(db, tenantId, refused);
  return { outcomes, dispatch: general.dispatch, releasedQueueIds: [...new Set([...general.releasedQueueIds, ...freed])] };
}

/**
 * The worker of a task cancelled while it ran has reported (its outcome is
 * refused: the task is CANCELLED): the attempt is over, so the lease that kept
 * the task's ordering key held (start-attempts.ts dueAndUnblocked) ends now
 * rather than when it runs out. Answers the queues whose next task of a key
 * may start.
 */
async function endCancelledLeases(db: Database, tenantId: string, items: readonly { taskId: string; token: string }[]): Promise<string[]> {
  const res = await db.pool.query<{ queue_id: string; ordering_key: string | null }>(
    `UPDATE tasks t SET lease_expires_at = now(), updated_at = now()
     FROM unnest($2::text[], $3::text[]) AS i(id, token)
     WHERE t.id = i.id AND t.tenant_id = $1 AND t.lease_token = i.token
       AND t.status = 'CANCELLED' AND t.cancel_requested AND t.lease_expires_at > now()
     RETURNING t.queue_id, t.ordering_key`,
    [tenantId, items.map((i) => i.taskId), items.map((i) => i.token)],
  );
  return [...new Set(res.rows.filter((r) => r.ordering_key !== null).map((r) => r.queue_id))];
}

/**
 * The general path: reads each lease first (a missing task and a stale lease are
 * refused differently), then records the rest per worker through completeAttempts,
 * which takes workflow tasks and ordering keys into account.
 */
async function completeLooked(
  db: Database,
  tenantId: string,
  items: LeaseCompletion[],
  horizonMs: number,
  answer: "ids" | TasksAnswer,
): Promise<{ outcomes: LeaseCompletionOutcome[]; dispatch: DispatchIntent[]; releasedQueueIds: string[] }> {
  const wellFormed = items.filter((i) => isWellFormedId(IdPrefix.task, i.taskId));
  const res = await db.pool.query<{ id: string; lease_token: string | null; lease_generation: number; workflow_id: string | null; worker_id: string | null }>(
    // A primary-key probe per id. On a table that grew faster than its statistics, `id = ANY(...)`
    // was planned as a scan of the tenant's every task (~5 ms a batch of 50); LIMIT 1 (an id is
    // unique) keeps the planner from flattening the probe back into that join.
    prepared(
      `SELECT t.id, t.lease_token, t.lease_generation, t.workflow_id, t.worker_id FROM unnest($1::text[]) AS i(id)
       CROSS JOIN LATERAL (SELECT * FROM tasks t WHERE t.id = i.id AND t.tenant_id = $2 LIMIT 1) t`,
      [wellFormed.map((i) => i.taskId), tenantId],
    ),
  );
  const leases = new Map(res.rows.map((r) => [r.id, r]));
  const refusals = new Map<string, "NOT_FOUND" | "CONFLICT">();
  const byActor = new Map<string, Completion[]>();
  for (const item of items) {
    const lease = leases.get(item.taskId);
    const generation = parseLeaseToken(item.token)?.generation;
    if (!lease) refusals.set(item.taskId, "NOT_FOUND");
    else if (generation === undefined || lease.lease_token !== item.token || lease.lease_generation !== generation) refusals.set(item.taskId, "CONFLICT");
    else {
      const actor = pullActor(lease);
      const list = byActor.get(actor) ?? [];
      list.push({ taskId: item.taskId, leaseGeneration: generation, result: item.result, workflowId: lease.workflow_id });
      byActor.set(actor, list);
    }
  }
  const recorded = new Map<string, TaskRecord | undefined>();
  const dispatch: DispatchIntent[] = [];
  const releasedQueueIds: string[] = [];
  for (const [actor, completions] of byActor) {
    const done =
      answer === "ids"
        ? { accepted: [], ...(await completeAttemptsQuietly(db, completions, actor, horizonMs)) }
        : await completeAttempts(db, completions, actor, horizonMs, answer);
    const refused = new Set(done.refused);
    for (const c of completions) if (!refused.has(c.taskId)) recorded.set(c.taskId, undefined);
    for (const task of done.accepted) recorded.set(task.id, task);
    dispatch.push(...done.dispatch);
    releasedQueueIds.push(...done.workflows.releasedQueueIds);
  }
  const outcomes = items.map((item): LeaseCompletionOutcome => {
    if (!recorded.has(item.taskId)) return { taskId: item.taskId, refused: refusals.get(item.taskId) ?? "CONFLICT" };
    const task = recorded.get(item.taskId);
    return task ? { taskId: item.taskId, task } : { taskId: item.taskId };
  });
  return { outcomes, dispatch, releasedQueueIds: [...new Set(releasedQueueIds)] };
}

export async function failLease(
  db: Database,
  tenantId: string,
  taskId: string,
  token: string,
  error: string,
  retryable: boolean,
  horizonMs: number,
): Promise<{ task: TaskRecord; dispatch: DispatchIntent[] }> {
  assertTaskId(taskId);
  const row = await currentLease(db, tenantId, taskId, token);
  if (row.status === "CANCELLED") {
    await endCancelledLeases(db, tenantId, [{ taskId, token }]);
    throw new StaleLeaseError();
  }
  const decision = decideAfterFailure({
    attempt: row.attempts as number,
    maxAttempts: row.max_attempts as number,
    retryable,
    backoff: {
      strategy: row.backoff_strategy,
      delaySeconds: row.backoff_delay_seconds as number,
      maxDelaySeconds: row.backoff_max_delay_seconds as number | null,
      jitter: row.backoff_jitter as boolean,
    },
  });
  const done = await failAttempt(
    db,
    { taskId, leaseGeneration: generationOf(token), error, outcome: "FAILED", decision },
    pullActor(row),
    horizonMs,
  );
  const task = done.accepted[0];
  if (!task) throw new StaleLeaseError();
  return { task, dispatch: done.dispatch };
}
