/**
 * SQL shared by the transitions. Every transition is one statement: a CTE that
 * locks the rows still in the expected state, updates them, and writes the
 * audit event (and outbox rows) from what the update returned. A row that is
 * no longer in the expected state (or whose lease generation moved on) is
 * simply not returned: the caller reports that as refused.
 */

/**
 * Audit row per updated task; `source` must expose id, tenant_id, from_status, status, attempts,
 * attempts_before_redrive, lease_generation. The event's attempt is the attempt's number, which goes
 * on across redrives (attempts alone counts the current budget).
 */
export function eventInsert(source: string, actorParam: string, reasonExpr = "NULL"): string {
  return `INSERT INTO task_events (task_id, tenant_id, from_status, to_status, attempt, lease_generation, actor, reason)
    SELECT id, tenant_id, from_status, status, attempts_before_redrive + attempts, lease_generation, ${actorParam}, ${reasonExpr} FROM ${source}`;
}

/**
 * Ends the attempt each row of `source` held (`source` exposes id and
 * old_token, the lease token it had). Each attempt is found by an index probe
 * on (task_id, id) and updated by primary key: a join would let the planner
 * scan every attempt row whenever its statistics lag behind a fast-growing table.
 * The probe takes the task's newest attempt, and the token is checked on that
 * one row: only a start writes an attempt, with the token it gives the task,
 * so the attempt a task's token names is its newest. With the token tested
 * inside the probe, a planner without statistics guessed ~16 attempts a task
 * and chose a bitmap scan and a sort, each rescan sizing the table (a system call).
 */
export function endAttempts(source: string, set: string, where = "TRUE"): string {
  return `UPDATE task_attempts a SET ${set}
    WHERE a.id = ANY(ARRAY(
      SELECT (SELECT newest.id FROM (SELECT x.id, x.lease_token FROM task_attempts x WHERE x.task_id = s.id ORDER BY x.id DESC LIMIT 1) newest
              WHERE newest.lease_token = s.old_token)
      FROM ${source} s WHERE ${where}))`;
}

import { dispatchOutboxCtes } from "../outbox/dispatch-intent.js";

/**
 * Terminal events notify webhooks and callbacks through the outbox. Only rows
 * someone listens to are written, so a tenant without webhooks costs nothing.
 * The payload keeps what a redrive changes (plan-deliveries.ts): the envelope
 * tells the task as it ended, even when it was redriven before the fan-out.
 */
export function notifyOutboxInsert(source: string): string {
  return `INSERT INTO outbox (kind, tenant_id, task_id, payload)
    SELECT 'NOTIFY', s.tenant_id, s.id,
      jsonb_build_object('status', s.status, 'attempts', s.attempts, 'runAt', s.run_at, 'startedAt', s.started_at,
        'completedAt', s.completed_at, 'lastError', s.last_error)
    FROM ${source} s
    WHERE s.status IN ('SUCCEEDED', 'DEAD', 'CANCELLED', 'SKIPPED')
      AND (s.callback_url IS NOT NULL
           OR EXISTS (SELECT 1 FROM webhooks w WHERE w.tenant_id = s.tenant_id AND w.enabled AND w.deleted_at IS NULL))`;
}

/**
 * The join of a transition's UPDATE to the candidates it locked, by id,
 * written as `= ANY(ARRAY[id])` rather than `=`: no hash or merge join can
 * serve it, so each candidate is found by one primary-key probe, estimated at
 * one row. With `=`, a plan cached while `tasks` was small (a fresh install,
 * or statistics behind a table growing by thousands of rows a second) hashed
 * the candidates against a sequential scan of the whole table, and kept doing
 * so as it grew: 35 ms for 50 candidates among 20,000 rows, against 2 ms. (A
 * closed range `>= AND <=` forbids the hash join too, but the planner guesses
 * a range holds 0.5% of the table: at 100,000 tasks the estimates grew past
 * the JIT threshold and each start compiled for ~60 ms.)
 */
export function sameId(target: string, candidate: string): string {
  return `${target}.id = ANY(ARRAY[${candidate}.id])`;
}

/**
 * A subquery that locks the task with id `idExpr` by primary-key probe and
 * yields `columns` of it, for the caller to test the locked row.
 * OFFSET 0 keeps the caller's test out of the probe: there the planner could
 * serve `id = x` from a partial index whose predicate the test implies, such
 * as tasks_runnable_lane_idx (id is its fourth column) or the RUNNING-only
 * lease index, and walk every waiting or running task for each id (0.2-0.5 ms
 * per id at 20,000 tasks), a plan that looked cheapest while the table was small.
 * `alsoWhere` (over the alias LOCKED_TASK) keeps rows it excludes unlocked, such as another tenant's.
 * The row's alias is one no caller uses: `idExpr` names the caller's own row,
 * and an alias it shared (an outer `l`) made `l.id = l.id`, true of every task.
 */
export function lockById(idExpr: string, columns: readonly string[], alsoWhere?: string): string {
  const a = LOCKED_TASK;
  if (idExpr.startsWith(`${a}.`)) throw new Error(`lockById: ${idExpr} names the locked row itself`);
  return `(SELECT ${columns.map((c) => `${a}.${c}`).join(", ")} FROM tasks ${a} WHERE ${a}.id = ${idExpr}${alsoWhere === undefined ? "" : ` AND ${alsoWhere}`} OFFSET 0 FOR UPDATE OF ${a})`;
}

/** The alias of the row lockById locks, for its `alsoWhere`. */
export const LOCKED_TASK = "locked_task";

/** An UPDATE ... RETURNING hands whole rows on: to eventInsert/notify/dispatch CTEs and to the caller. */
export const RETURNING_FOR_CTES = "t.*";

/**
 * New value of enqueued_generation when a transition bumps the dispatch
 * generation: handed over now (an outbox row is written in the same statement)
 * when the task is due within the horizon, or never needed for PULL queues;
 * otherwise left behind so the horizon promoter picks it up when it nears.
 */
export function enqueuedGenerationExpr(newGeneration: string, runAt: string, horizonParam: string): string {
  return `CASE WHEN (SELECT eq.mode FROM queues eq WHERE eq.id = t.queue_id) = 'PULL'
      OR ${runAt} <= now() + ${horizonParam} * interval '1 millisecond'
    THEN ${newGeneration} ELSE t.enqueued_generation END`;
}

/**
 * Ordering keys: when a task of a key reaches a terminal state, the key's
 * first waiting task becomes startable. Its Redis job (if any) was dropped by
 * the worker that found it blocked, so it gets a new dispatch generation and
 * an outbox row here, in the same statement. The first waiting task, not the
 * first after the finished one: a task redriven while a later task of its key
 * ran is older than that one and goes next, and with only later tasks
 * released its job waited for the reconciler's sweep (RECONCILE_INTERVAL_SECONDS
 * on an idle platform, a whole pass over the backlog on a busy one) with
 * every later task of the key behind it. The key's unfinished tasks have their own partial index
 * (migration tasks_ordering_unfinished), so the look costs what the key has
 * waiting, not its finished history. Defines CTEs `rel` and `relob`; select
 * `released` via RELEASED_JOIN.
 */
export function releaseNextInOrder(source: string, horizonParam: string, excluding?: string): string {
  // `excluding`: a CTE of ids the same statement also writes (a purge's batch). Its rows still read as
  // waiting in the statement's snapshot, and picking one made this update a no-op on a row already
  // updated, leaving the key's real next task unreleased.
  const notExcluded = excluding === undefined ? "" : ` AND NOT EXISTS (SELECT 1 FROM ${excluding} x WHERE x.id = o.id)`;
  return `rel AS (
      UPDATE tasks t SET dispatch_generation = t.dispatch_generation + 1,
        enqueued_generation = ${enqueuedGenerationExpr("t.dispatch_generation + 1", "t.run_at", horizonParam)}
      FROM (
        SELECT DISTINCT ON (o.tenant_id, o.ordering_key) o.id
        FROM ${source} s JOIN tasks o ON o.tenant_id = s.tenant_id AND o.ordering_key = s.ordering_key
        WHERE s.ordering_key IS NOT NULL AND s.status IN ('SUCCEEDED', 'DEAD', 'CANCELLED', 'SKIPPED')
          AND o.status IN ('QUEUED', 'SCHEDULED', 'RETRYING')${notExcluded}
        ORDER BY o.tenant_id, o.ordering_key, o.id
      ) nx WHERE ${sameId("t", "nx")}
      RETURNING t.*
    ),
    ${dispatchOutboxCtes("relob", "rel", horizonParam)}`;
}

/** Cross join adding a `released` JSON array of dispatch intents (see releaseNextInOrder). */
export const RELEASED_JOIN = `CROSS JOIN (
    SELECT COALESCE(json_agg(json_build_object('task_id', rel.id, 'tenant_id', rel.tenant_id, 'queue_id', rel.queue_id,
      'priority', rel.priority, 'run_at', rel.run_at, 'dispatch_generation', rel.dispatch_generation,
      'outbox_id', relob.outbox_id)), '[]'::json) AS released
    FROM rel JOIN relob ON relob.task_id = rel.id) released_rows`;

/**
 * The cancel transition's CTEs (`cand`, `upd`, `att`, `ev`, `nt`), shared by
 * cancelTask, CANCEL_RUNNING schedules and cancelWorkflow: rows matching
 * `candidateWhere` (over `tasks t`, locked) become CANCELLED; a RUNNING one
 * keeps its lease for heartbeats but gets cancelRequested, and its attempt
 * ends CANCELLED. Callers append their own CTEs and the final SELECT.
 */
export function cancelCtes(candidateWhere: string, actorParam: string, reasonExpr = "NULL", lockOrder = ""): string {
  return cancelCandidatesCtes(
    `SELECT t.id, t.status AS from_status, t.lease_token AS old_token FROM tasks t
      WHERE ${candidateWhere} ${lockOrder} FOR UPDATE OF t`,
    actorParam,
    reasonExpr,
  );
}

/**
 * cancelCtes with the candidates' statement given whole: `candidates` locks
 * the rows to cancel and yields their id, from_status and old_token (their
 * lease token), such as one lockById probe per id of a list (purge-queue.ts).
 */
export function cancelCandidatesCtes(candidates: string, actorParam: string, reasonExpr = "NULL"): string {
  return `WITH cand AS (
      ${candidates}
    ),
    upd AS (
      UPDATE tasks t SET status = 'CANCELLED', completed_at = now(), updated_at = now(),
        cancel_requested = (cand.from_status = 'RUNNING')
      FROM cand WHERE ${sameId("t", "cand")}
      RETURNING ${RETURNING_FOR_CTES}, cand.from_status, cand.old_token
    ),
    att AS (${endAttempts("upd", "finished_at = now(), outcome = 'CANCELLED'", "s.from_status = 'RUNNING'")}),
    ev AS (${eventInsert("upd", actorParam, reasonExpr)}),
    nt AS (${notifyOutboxInsert("upd")})`;
}
