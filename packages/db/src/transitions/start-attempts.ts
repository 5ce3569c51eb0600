import { randomBytes } from "node:crypto";
import { ANSWER_BODY_BYTES, MAX_INLINE_PARENT_RESULTS_BYTES } from "@tasklane/core";
import { prepared, type Database, type Queryable } from "../database.js";
import {
  LEASED_TASK_COLUMNS,
  PUSH_TASK_COLUMNS,
  mapLeasedTaskRow,
  mapPushTaskRow,
  type LeasedTaskRecord,
  type PushTaskRecord,
  type TaskRecord,
} from "../tasks/task-record.js";
import { jsonBytes } from "../tasks/page-body-budget.js";
import { firstInWaitingLanes } from "../tasks/waiting-lanes.js";
import { eventInsert, lockById, sameId } from "./sql-fragments.js";
import { UNFINISHED_TASK_STATUSES } from "./workflow-progress.js";

export interface StartedAttempt<Task extends LeaseFields = LeasedTaskRecord> {
  task: Task;
  leaseToken: string;
  leaseExpiresAt: Date;
  /**
   * Workflow tasks only: each parent's result by workflow key (`{}` for a root), for the PUSH body and the lease;
   * past MAX_INLINE_PARENT_RESULTS_BYTES an OmittedParentResult stands in for a result.
   */
  parents?: Record<string, unknown>;
  /**
   * Milliseconds from the statement's answer until the task's runAt, by the
   * database's clock: a PUSH task started ahead of time (startAheadMs) runs
   * this much later. 0 for a task that was due.
   */
  startInMs: number;
}

export interface StartOptions {
  workerId: string;
  /**
   * Lease length: PULL names it (the requested lease); PUSH asks for the
   * task's own timeout plus a grace, worked out in the starting statement.
   */
  leaseMs: number | { timeoutPlusMs: number };
  actor: string;
  /**
   * Also start tasks due within this many ms: the PUSH worker or the SDK
   * Worker then holds each until its runAt (startInMs), so the start statement's
   * round trip is off a delayed task's critical path. The attempt, its lease
   * and startedAt count from runAt.
   */
  startAheadMs?: number;
  /**
   * PULL leases only: lease nothing unless some waiting task of the queue is
   * due within this many ms (already due counts). A long poll uses half its
   * look-ahead, so tasks trickling in are leased a batch at a time, each still
   * that far ahead of its runAt, instead of one call per task.
   */
  onceDueWithinMs?: number | null;
}

/** What every start statement answers of the lease, whatever else it answers of the task. */
type LeaseFields = Pick<TaskRecord, "leaseToken" | "leaseExpiresAt">;

const RANDOM_PART_BYTES = 16;

/**
 * n unguessable parts of lease tokens (`lt_<generation>_<22 chars>`), 16
 * random bytes each, drawn in one call: a call per token was a tenth of a
 * lease's CPU in the gateway.
 */
function randomParts(n: number): string[] {
  const bytes = randomBytes(RANDOM_PART_BYTES * n);
  return Array.from({ length: n }, (_, i) => bytes.toString("base64url", i * RANDOM_PART_BYTES, (i + 1) * RANDOM_PART_BYTES));
}

/**
 * Starts an attempt on each candidate that is still runnable: status QUEUED,
 * SCHEDULED or RETRYING, due (run_at <= now() plus any look-ahead, the
 * database's clock), queue not paused, and no earlier task of the same
 * ordering key unfinished. The lease generation grows by one and names the new
 * token, so an older token can never match again (fencing). A task started
 * ahead counts its attempt and lease from run_at.
 */
function startSql(candidates: string, answer: StartAnswer): string {
  // Candidates carry `ord`, the order the caller gets the started tasks in (lease order for PULL).
  return `WITH cand AS (${candidates}),
    upd AS (
      UPDATE tasks t SET status = 'RUNNING', attempts = t.attempts + 1, lease_generation = t.lease_generation + 1,
        lease_token = 'lt_' || (t.lease_generation + 1) || '_' || cand.rand,
        lease_expires_at = GREATEST(now(), t.run_at) + cand.lease_ms * interval '1 millisecond',
        started_at = COALESCE(t.started_at, GREATEST(now(), t.run_at)), worker_id = $WORKER, updated_at = now()
      FROM cand WHERE ${sameId("t", "cand")}
      RETURNING ${answer.returning}, cand.from_status, cand.ord
    ),
    att AS (
      INSERT INTO task_attempts (task_id, tenant_id, number, worker_id, lease_token, started_at)
      SELECT id, tenant_id, attempts_before_redrive + attempts, worker_id, lease_token, GREATEST(now(), run_at) FROM upd
    ),
    ev AS (${eventInsert("upd", "$ACTOR")})
    SELECT ${answer.columns}, ${answer.parents} AS parents,
      -- From when the rows are returned (clock_timestamp), not from the statement's start (now()):
      -- the time the statement itself took is already waited.
      GREATEST(0, ceil(extract(epoch FROM u.run_at - clock_timestamp()) * 1000))::int AS start_in_ms
    FROM ${answer.from} ORDER BY u.ord`;
}

/** What a start statement's rows hold: from the updated rows (`upd`), as `u`. */
interface StartAnswer {
  returning: string;
  columns: string;
  from: string;
  /** The workflow task's parents' results (parentResults), or NULL for other tasks. */
  parents: string;
}

/**
 * LeasedTaskRecord's columns, what a lease answers (the API's Task and the
 * lease): 23 of the task's 37, and its queue's name once for the statement
 * (queue $1, the one leased from) rather than joined per row.
 */
const LEASED_TASKS: StartAnswer = {
  // The attempt and event inserts read these too; the parents were read with the candidates, to be measured.
  returning: [...[...LEASED_TASK_COLUMNS, "tenant_id", "worker_id", "attempts_before_redrive"].map((c) => `t.${c}`), "cand.parents"].join(", "),
  columns: [...LEASED_TASK_COLUMNS.map((c) => `u.${c}`), "(SELECT q.name FROM queues q WHERE q.id = $1) AS queue_name"].join(", "),
  from: "upd u",
  parents: "u.parents",
};

/**
 * PushTaskRecord's columns only, without the queue join: a PUSH worker parses
 * 19 columns of each started task instead of 37 (five timestamps fewer), and
 * Postgres neither formats the rest nor probes queues once per row.
 */
const PUSH_TASKS: StartAnswer = {
  // The attempt and event inserts and the parents' results read these too.
  returning: [...PUSH_TASK_COLUMNS, "status", "worker_id", "workflow_key", "attempts_before_redrive"].map((c) => `t.${c}`).join(", "),
  columns: PUSH_TASK_COLUMNS.map((c) => `u.${c}`).join(", "),
  from: "upd u",
  parents: parentResults("u"),
};

/**
 * A workflow task starts with its parents' results in hand (they all
 * succeeded before it was released), read in the starting statement so the
 * hot path keeps one round trip; for other tasks it is NULL at no cost
 * (`alias` names the task's row: its workflow_id and workflow_key).
 * Results are handed in key order while their running total stays within
 * MAX_INLINE_PARENT_RESULTS_BYTES, the rest as an OmittedParentResult marker:
 * aggregating every result failed past jsonb's 255 MiB ceiling, and with the
 * task the statement, so the whole lease batch and every later lease of the
 * queue. Sizing costs one text rendering of each parent's result, a few
 * microseconds for a small fan-in (docs/internals.md has the measurement).
 */
function parentResults(alias: string): string {
  return `CASE WHEN ${alias}.workflow_id IS NULL THEN NULL ELSE COALESCE((
    SELECT jsonb_object_agg(s.parent_key, CASE WHEN s.running <= ${MAX_INLINE_PARENT_RESULTS_BYTES} THEN s.result
      ELSE jsonb_build_object('resultOmitted', true, 'taskId', s.id, 'resultBytes', s.bytes) END)
    FROM (
      SELECT e.parent_key, p.id, p.result, sz.bytes, sum(sz.bytes) OVER (ORDER BY e.parent_key COLLATE "C") AS running
      FROM workflow_edges e
      JOIN tasks p ON p.workflow_id = e.workflow_id AND p.workflow_key = e.parent_key
      CROSS JOIN LATERAL (SELECT COALESCE(octet_length(p.result::text), 0) AS bytes) sz
      WHERE e.workflow_id = ${alias}.workflow_id AND e.child_key = ${alias}.workflow_key) s), '{}'::jsonb) END`;
}

/**
 * Waiting, due by `dueBy`, and no earlier task of the same ordering key
 * unfinished. A PULL task cancelled while it ran still holds its key until
 * its worker reports (endCancelledLeases) or its lease runs out: cancellation
 * there is cooperative, and its handler may still be running. A cancelled
 * PUSH attempt's request is aborted at once, so its key is free.
 *
 * The unfinished look names the unfinished statuses, the predicate of
 * tasks_ordering_unfinished_idx, so it reads only the key's unfinished tasks.
 * Written as "not finished" (with the cancelled case in the same OR) it walked
 * the key's whole finished history for every waiting task of the key the lane
 * scan met: a lease of 50 behind 200 waiting tasks of a key with 50,000
 * finished took 6.5-9 s, 9-10 ms this way. The cancelled look comes after
 * it, so it runs only for a task nothing unfinished blocks (AND is evaluated
 * left to right), one per key, and reads tasks_ordering_cancelled_running_idx,
 * which holds only ordered tasks cancelled while they ran: through the key's
 * index it read the key's whole finished history on every start.
 */
const dueAndUnblocked = (dueBy: string) => `t.status IN ('QUEUED', 'SCHEDULED', 'RETRYING') AND t.run_at <= ${dueBy}
  AND (t.ordering_key IS NULL OR (NOT EXISTS (
    SELECT 1 FROM tasks o WHERE o.tenant_id = t.tenant_id AND o.ordering_key = t.ordering_key AND o.id < t.id
      AND o.status IN ${UNFINISHED_TASK_STATUSES})
    AND NOT EXISTS (
    SELECT 1 FROM tasks o WHERE o.tenant_id = t.tenant_id AND o.ordering_key = t.ordering_key AND o.id < t.id
      AND o.status = 'CANCELLED' AND o.cancel_requested AND o.lease_expires_at > now()
      AND EXISTS (SELECT 1 FROM queues q WHERE q.id = o.queue_id AND q.mode = 'PULL'))
    -- A later task of the key may be running already: this one was redriven after it started.
    AND NOT EXISTS (
    SELECT 1 FROM tasks o WHERE o.tenant_id = t.tenant_id AND o.ordering_key = t.ordering_key AND o.id > t.id
      AND o.status = 'RUNNING')))`;


function mapStarted<Task extends LeaseFields>(rows: Record<string, unknown>[], mapTask: (row: Record<string, unknown>) => Task): StartedAttempt<Task>[] {
  return rows.map((row) => {
    const task = mapTask(row);
    const parents = row.parents as Record<string, unknown> | null;
    return {
      task,
      leaseToken: task.leaseToken as string,
      leaseExpiresAt: task.leaseExpiresAt as Date,
      startInMs: row.start_in_ms as number,
      ...(parents !== null ? { parents } : {}),
    };
  });
}

/** PUSH: start the given tasks (picked from Redis). Those no longer runnable are left out. */
export async function startAttemptsByIds(db: Database, taskIds: string[], options: StartOptions): Promise<StartedAttempt<PushTaskRecord>[]> {
  if (taskIds.length === 0) return [];
  const fixedMs = typeof options.leaseMs === "number" ? options.leaseMs : 0;
  const graceMs = typeof options.leaseMs === "number" ? 0 : options.leaseMs.timeoutPlusMs;
  // One primary-key probe per id (lockById). No SKIP LOCKED: these jobs are
  // already out of Redis, so a task skipped because the scheduler was
  // promoting it (SCHEDULED -> QUEUED) at that moment would wait for the
  // reconciler's sweep, seconds late. Waiting for that lock is short, and rows
  // are locked in id order like every other transition that waits.
  const res = await db.pool.query(
    prepared(START_BY_IDS, [taskIds, randomParts(taskIds.length), fixedMs, graceMs, options.workerId, options.actor, options.startAheadMs ?? 0]),
  );
  return mapStarted(res.rows, mapPushTaskRow);
}

// Built once: the same text for every batch.
const START_BY_IDS = startSql(
  `SELECT t.id, t.status AS from_status, i.rand, i.ord,
     (CASE WHEN $3::float8 > 0 THEN $3::float8 ELSE t.timeout_seconds * 1000 + $4::float8 END) AS lease_ms
   FROM (SELECT u.id, u.rand, u.ord FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS u(id, rand, ord) ORDER BY u.id) i
   CROSS JOIN LATERAL ${lockById("i.id", ["id", "tenant_id", "queue_id", "status", "run_at", "ordering_key", "timeout_seconds"])} t
   WHERE ${dueAndUnblocked("now() + $7::float8 * interval '1 millisecond'")}
     AND NOT EXISTS (SELECT 1 FROM queues pq WHERE pq.id = t.queue_id AND pq.paused)`,
  PUSH_TASKS,
)
  .replace("$WORKER", "$5")
  .replace("$ACTOR", "$6");

/**
 * PULL: lease up to `max` runnable tasks of one queue, HIGH before NORMAL
 * before LOW, aged tasks counting one lane higher, then oldest first.
 * One statement, so it runs on its own (autocommit).
 */
export async function startAttemptsFromQueue(
  db: Database,
  queueId: string,
  max: number,
  agingSeconds: number,
  options: StartOptions,
): Promise<StartedAttempt[]> {
  return startAttemptsFromQueueIn(db.pool, queueId, max, agingSeconds, options);
}

/** startAttemptsFromQueue inside the caller's transaction (which may hold limit locks). */
export async function startAttemptsFromQueueIn(
  q: Queryable,
  queueId: string,
  max: number,
  agingSeconds: number,
  options: StartOptions,
): Promise<StartedAttempt[]> {
  const fixedLease = typeof options.leaseMs === "number" ? options.leaseMs : 0;
  const rands = randomParts(max);
  const res = await q.query(
    prepared(LEASE_FROM_QUEUE, [
      queueId, max, agingSeconds, options.workerId, options.actor, rands, fixedLease, options.startAheadMs ?? 0, options.onceDueWithinMs ?? null,
    ]),
  );
  return mapStarted(res.rows, (row) => mapLeasedTaskRow(row, row.queue_name as string));
}

/**
 * The lease order is a merge of the three priority lanes: within one lane,
 * aging only ever moves older tasks up, so a lane's first `max` tasks in
 * (run_at, id) order hold every one of its tasks the merged order can pick.
 * Each lane is read in that order from its own stretch of
 * tasks_runnable_lane_idx and stops after `max` rows; sorting every waiting
 * task of the queue by its aged lane instead cost time in proportion to the
 * backlog (17 ms for 50 tasks out of 5,000). A lane's rows locked but not
 * picked are released when the statement commits.
 *
 * A lease answers at most ANSWER_BODY_BYTES (4 MiB) of payloads and inline
 * parents' results, as a tasks page does (at least one task): 100 tasks of
 * 256 KiB were a 25 MB answer, held several times over in the gateway, and a
 * tenant may have several in flight; 10 joins each handed 1 MB of parents
 * were a 10 MB lease (100 such joins, 100 MB). Leasing fewer than `max` is
 * always allowed; the rest wait for the next lease. The parents are built
 * once, on the picked rows, and both measured (their binary size: the
 * aggregate is in memory, nothing to decompress) and answered; for a task
 * outside workflows they are NULL, measured as 0. Sizes are measured after
 * the LIMIT, on the picked rows only,
 * as their raw binary size (jsonBytes: no text rendering; a large payload
 * costs its decompression, ~8 µs for 21 KB): ~0.3 µs a small row in
 * Postgres (200,000 rows, 55 ms without, 120 ms with), against the
 * ~20-100 µs a leased task costs; an A/B lease loop could not tell the two
 * apart.
 */
const LEASE_FROM_QUEUE = startSql(
  `SELECT p.id, p.from_status, ($6::text[])[p.ord] AS rand, p.lease_ms, p.ord, p.parents FROM (
   SELECT b.*, sum(b.body_bytes + COALESCE(pg_column_size(b.parents), 0)) OVER (ORDER BY b.ord ROWS UNBOUNDED PRECEDING) AS bytes_through FROM (
   SELECT c.*, ${jsonBytes("c.payload")} AS body_bytes, ${parentResults("c")} AS parents FROM (
     SELECT w.id, w.from_status, w.lease_ms, w.payload, w.workflow_id, w.workflow_key,
       row_number() OVER (ORDER BY GREATEST(1, l.lane - floor(extract(epoch FROM now() - w.waiting_since) / $3::float8)), w.run_at, w.id) AS ord
     FROM (VALUES ('HIGH'::"Priority", 1), ('NORMAL'::"Priority", 2), ('LOW'::"Priority", 3)) AS l(priority, lane)
     CROSS JOIN LATERAL (
       -- A task waits from its runAt or its submission, whichever is later: a runAt in the past
       -- (backdated) must not age a task past others that waited longer (the PUSH lanes age the same way).
       SELECT t.id, t.status AS from_status, t.run_at, GREATEST(t.run_at, t.created_at) AS waiting_since, t.payload, t.workflow_id, t.workflow_key,
         -- Never past the attempt's time budget: a heartbeat cannot extend beyond it either.
         LEAST(CASE WHEN $7::float8 > 0 THEN $7::float8 ELSE 3600000 END, t.timeout_seconds * 1000) AS lease_ms
       FROM tasks t
       WHERE t.queue_id = $1 AND t.priority = l.priority AND ${dueAndUnblocked("now() + $8::float8 * interval '1 millisecond'")}
       ORDER BY t.run_at, t.id
       LIMIT $2 FOR UPDATE OF t SKIP LOCKED) w
     -- Checked once for the whole statement, not per row (which also spoils the lane estimates).
     WHERE NOT (SELECT pq.paused FROM queues pq WHERE pq.id = $1)
       AND ($9::float8 IS NULL OR EXISTS (
         SELECT 1 FROM ${firstInWaitingLanes("$1", "t.run_at <= now() + $9::float8 * interval '1 millisecond'")}))
     -- Aging: each PRIORITY_AGING_SECONDS of waiting counts one lane higher (LOW reaches HIGH after two).
     ORDER BY ord
     LIMIT $2) c
   -- A fence: without it the planner may pull this level up and build each task's parents twice.
   OFFSET 0) b) p
   -- The answer's payloads and parents within core's ANSWER_BODY_BYTES, as a tasks page: at least one task.
   WHERE p.ord = 1 OR p.bytes_through <= ${ANSWER_BODY_BYTES}`,
  LEASED_TASKS,
)
  .replace("$WORKER", "$4")
  .replace("$ACTOR", "$5");
