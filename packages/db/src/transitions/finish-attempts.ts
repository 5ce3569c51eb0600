import { MAX_ERROR_LENGTH, type FailureDecision } from "@tasklane/core";
import { prepared, withTransaction, type Database, type Queryable } from "../database.js";
import { dispatchOutboxCtes, mapDispatchRow, mapReleased, type DispatchIntent } from "../outbox/dispatch-intent.js";
import { bodyBytesOf, withheldBodiesSql } from "../tasks/page-body-budget.js";
import { TASK_COLUMN_NAMES_BUT_BODIES, mapTaskRow, taskColumnsOf, type TaskRecord } from "../tasks/task-record.js";
import { RELEASED_JOIN, RETURNING_FOR_CTES, endAttempts, enqueuedGenerationExpr, eventInsert, LOCKED_TASK, lockById, notifyOutboxInsert, releaseNextInOrder, sameId } from "./sql-fragments.js";
import { advanceWorkflows, noProgress, type WorkflowProgress } from "./workflow-progress.js";
import { storableJson, storableText } from "../pg-text.js";

/** Five minutes: matches the scheduler's default DISPATCH_HORIZON_SECONDS. */
const DEFAULT_HORIZON_MS = 300_000;

export interface Completion {
  taskId: string;
  leaseGeneration: number;
  result: unknown;
  /**
   * The task's workflow as the caller knows it from the lease: an id skips the
   * hot-path statement, which never takes a workflow task. Only a routing
   * hint: a wrong one costs a transaction, never a refused outcome.
   */
  workflowId?: string | null;
}

export interface FinishResult {
  /** Tasks whose outcome was recorded, with their new state. */
  accepted: TaskRecord[];
  /** Task ids whose lease had moved on (expired, re-leased, cancelled): nothing was changed. */
  refused: string[];
  dispatch: DispatchIntent[];
  /** What the outcomes did to their workflows (children released, descendants skipped, workflows finished). */
  workflows: WorkflowProgress;
}

/**
 * What every success writes. last_error is cleared: it tells why the task's
 * latest attempt failed, and after a success (a retry's, or a redriven run's)
 * nothing has; each failed attempt keeps its own error in the attempt history.
 */
const SUCCEEDED_SET = "status = 'SUCCEEDED', result = cand.result::jsonb, last_error = NULL, completed_at = now()";

/**
 * What a finishing statement answers with: `tasks`, each task whole; `ids`,
 * the ids alone; `budgeted`, each task whole but that past the bytes its
 * budget parameter holds of payloads and results (in id order) its bodies
 * are withheld (withheldBodiesSql), for an answer that carries the tasks
 * (completeTasks { task }: 500 × 256 KiB payloads was 128 MB); `bodiless`,
 * each task but for its payload and result (null), for a caller that reads
 * only its state and trace (an outcome's span).
 */
export type TaskAnswer = "tasks" | "ids" | "budgeted" | "bodiless";

/**
 * `releasesOrder` false leaves out the ordering-key release (releaseNextInOrder):
 * only for candidates that cannot have an ordering key. Those CTEs cost about
 * half the statement's planning, and their UPDATE fires the tasks counter
 * trigger a second time, even when it touches no row.
 */
function finishSql(
  cand: string,
  set: string,
  outcome: string,
  errorExpr: string,
  horizonParam: string,
  actorParam: string,
  dispatchRetry: boolean,
  releasesOrder = true,
  answer: TaskAnswer = "tasks",
  reasonExpr = "NULL",
  budgetParam = "NULL",
): string {
  const extra = `${dispatchRetry ? ", ob.outbox_id" : ""}${releasesOrder ? ", released_rows.released" : ""}`;
  const from = `FROM upd
    JOIN queues q ON q.id = upd.queue_id ${dispatchRetry ? "LEFT JOIN ob ON ob.task_id = upd.id" : ""}
    ${releasesOrder ? RELEASED_JOIN : ""}`;
  const whole = `SELECT ${taskColumnsOf("upd")}${extra} ${from}`;
  const answers: Record<TaskAnswer, () => string> = {
    tasks: () => whole,
    ids: () => "SELECT upd.id FROM upd",
    budgeted: () =>
      withheldBodiesSql(
        whole,
        [...TASK_COLUMN_NAMES_BUT_BODIES, ...(dispatchRetry ? ["outbox_id"] : []), ...(releasesOrder ? ["released"] : [])],
        "id",
        budgetParam,
      ),
    bodiless: () =>
      `SELECT ${taskColumnsOf("upd").replace(/\bupd\.payload\b/, "NULL::jsonb AS payload").replace(/\bupd\.result\b/, "NULL::jsonb AS result")}${extra} ${from}`,
  };
  return `WITH cand AS (${cand}),
    upd AS (
      UPDATE tasks t SET ${set}, lease_token = NULL, lease_expires_at = NULL, updated_at = now()
      FROM cand WHERE ${sameId("t", "cand")}
      RETURNING ${RETURNING_FOR_CTES}, cand.from_status, cand.old_token
    ),
    att AS (${endAttempts("upd", `finished_at = now(), outcome = ${outcome}, error = ${errorExpr}`)}),
    ev AS (${eventInsert("upd", actorParam, reasonExpr)}),
    nt AS (${notifyOutboxInsert("upd")})
    ${releasesOrder ? `, ${releaseNextInOrder("upd", horizonParam)}` : ""}
    ${dispatchRetry ? `, ${dispatchOutboxCtes("ob", "upd", horizonParam)}` : ""}
    ${answers[answer]()}`;
}

/**
 * Records successful attempts, many in one statement (the worker groups its
 * completions). Each is accepted only if the task is still RUNNING under the
 * same lease generation.
 *
 * Tasks outside workflows take the hot path: one autocommit statement, a
 * lean one for tasks without an ordering key (nothing to release), then the
 * one that releases the next task of a key for those it left. The rest
 * (workflow tasks, and stale outcomes, refused again) are recorded in a
 * transaction that then advances their workflows (workflow-progress.ts).
 */
export function completeAttempts(
  db: Database,
  items: Completion[],
  actor: string,
  horizonMs = DEFAULT_HORIZON_MS,
  answer: TasksAnswer = "tasks",
): Promise<FinishResult> {
  if (answer === "tasks") return completeThrough(db, items, actor, horizonMs, WHOLE);
  if (answer === "bodiless") return completeThrough(db, items, actor, horizonMs, BODILESS);
  return completeThrough(db, items, actor, horizonMs, BUDGETED, answer);
}

/**
 * How completeAttempts answers with tasks: whole, without bodies, or
 * within a budget of their payloads' and results' bytes, which each
 * statement lowers by what it handed over (bodyBytesOf).
 */
export type TasksAnswer = "tasks" | "bodiless" | BodyBudget;

/** What an answer has left of its payloads' and results' bytes; lowered as they are read. */
export interface BodyBudget {
  bytes: number;
}

/** The statements of one answer: the lean one (no ordering key), the one outside workflows, and any task's (in a transaction). */
interface CompletionStatements {
  lean: CompletionStatement;
  outsideWorkflows: CompletionStatement;
  any: CompletionStatement;
}

/**
 * completeAttempts for a caller that only needs to know which outcomes were
 * refused (the PUSH worker, a PULL worker's completeTasks without `task`): the
 * lean statement answers with ids, without the queue join, instead of task
 * rows the worker parsed for nothing (about a twentieth of its CPU).
 */
export async function completeAttemptsQuietly(
  db: Database,
  items: Completion[],
  actor: string,
  horizonMs = DEFAULT_HORIZON_MS,
): Promise<Omit<FinishResult, "accepted">> {
  const { refused, dispatch, workflows } = await completeThrough(db, items, actor, horizonMs, QUIET);
  return { refused, dispatch, workflows };
}

/** The walk both share; `accepted` holds the tasks of the statements that answer with tasks. */
async function completeThrough(
  db: Database,
  items: Completion[],
  actor: string,
  horizonMs: number,
  statements: CompletionStatements,
  budget?: BodyBudget,
): Promise<FinishResult> {
  if (items.length === 0) return { accepted: [], refused: [], dispatch: [], workflows: noProgress() };
  const hinted = items.filter((i) => typeof i.workflowId === "string");
  const unhinted = items.filter((i) => typeof i.workflowId !== "string");
  // Each autocommit statement takes what it can; what it leaves goes on to the next.
  const accepted: TaskRecord[] = [];
  const dispatch: DispatchIntent[] = [];
  const recorded = new Set<string>();
  let pending = unhinted;
  for (const statement of [statements.lean, statements.outsideWorkflows]) {
    if (pending.length === 0) break;
    const done = await recordCompletions(db.pool, pending, actor, horizonMs, statement, undefined, budget);
    accepted.push(...done.accepted);
    dispatch.push(...done.dispatch);
    for (const id of done.ids) recorded.add(id);
    pending = pending.filter((i) => !recorded.has(i.taskId));
  }
  const rest = [...hinted, ...pending];
  if (rest.length === 0) return { accepted, refused: [], dispatch, workflows: noProgress() };
  const inWorkflows = await withTransaction(db.pool, async (client) => {
    const done = await recordCompletions(client, rest, actor, horizonMs, statements.any, undefined, budget);
    return { ...done, workflows: await advanceWorkflows(client, done.accepted, actor, horizonMs) };
  });
  for (const id of inWorkflows.ids) recorded.add(id);
  return {
    accepted: [...accepted, ...inWorkflows.accepted],
    refused: items.filter((i) => !recorded.has(i.taskId)).map((i) => i.taskId),
    dispatch: [...dispatch, ...inWorkflows.dispatch, ...inWorkflows.workflows.dispatch],
    workflows: inWorkflows.workflows,
  };
}

/**
 * The completion statement for the rows matching `scope`, built once per
 * scope. Rows are locked in id order (the lock order of cancelWorkflow), each
 * by its own primary-key probe (LATERAL): see startAttemptsByIds for why not a join.
 */
function completionSql(scope: string, releasesOrder = true, answer: TaskAnswer = "tasks", noted = false): CompletionStatement {
  // The budget, when the answer has one, is the last parameter.
  const budgetParam = `$${4 + (releasesOrder ? 1 : 0) + (noted ? 1 : 0) + 1}::bigint`;
  const text = finishSql(
    `SELECT t.id, t.status AS from_status, t.lease_token AS old_token, i.result
     FROM (SELECT u.id, u.gen, u.result FROM unnest($1::text[], $2::int[], $3::text[]) AS u(id, gen, result) ORDER BY u.id) i
     CROSS JOIN LATERAL ${lockById("i.id", ["id", "status", "lease_generation", "lease_token", "workflow_id", "ordering_key"])} t
     WHERE t.status = 'RUNNING' AND t.lease_generation = i.gen AND ${scope}`,
    SUCCEEDED_SET,
    `'SUCCEEDED'`,
    noted ? "$6::text" : "NULL",
    "$5::float8",
    "$4",
    false,
    releasesOrder,
    answer,
    noted ? "$6::text" : "NULL",
    budgetParam,
  );
  // Only the release uses the horizon ($5); a statement must not be sent parameters it does not name.
  return { text, usesHorizon: releasesOrder, answersWithTasks: answer !== "ids", noted, budgeted: answer === "budgeted" };
}

interface CompletionStatement {
  text: string;
  usesHorizon: boolean;
  answersWithTasks: boolean;
  /** Takes a note ($6, after the horizon) for the attempt's error and the event's reason. */
  noted: boolean;
  /** Takes the bytes of bodies the answer has left, last (see TaskAnswer). */
  budgeted: boolean;
}

const UNORDERED = "t.workflow_id IS NULL AND t.ordering_key IS NULL";
const COMPLETE_UNORDERED = completionSql(UNORDERED, false);
const COMPLETE_OUTSIDE_WORKFLOWS = completionSql("t.workflow_id IS NULL");
const COMPLETE_ANY = completionSql("TRUE");
const COMPLETE_ANY_NOTED = completionSql("TRUE", true, "tasks", true);
const WHOLE: CompletionStatements = { lean: COMPLETE_UNORDERED, outsideWorkflows: COMPLETE_OUTSIDE_WORKFLOWS, any: COMPLETE_ANY };
const BUDGETED: CompletionStatements = {
  lean: completionSql(UNORDERED, false, "budgeted"),
  outsideWorkflows: completionSql("t.workflow_id IS NULL", true, "budgeted"),
  any: completionSql("TRUE", true, "budgeted"),
};
const BODILESS: CompletionStatements = {
  lean: completionSql(UNORDERED, false, "bodiless"),
  outsideWorkflows: completionSql("t.workflow_id IS NULL", true, "bodiless"),
  any: completionSql("TRUE", true, "bodiless"),
};
/**
 * The quiet path (the PUSH worker's and the SDK Worker's outcomes): its lean
 * statement answers with ids, the others without bodies. Its callers keep no
 * task, and whole rows of ordering-key or workflow tasks (up to 500 × 256 KiB
 * payloads and results) went through the process only to be dropped.
 */
const QUIET: CompletionStatements = { ...BODILESS, lean: completionSql(UNORDERED, false, "ids") };

/**
 * Records one successful attempt whose answer is not kept: the task is
 * SUCCEEDED with a null result, and `note` says why, as the attempt's error
 * and the event's reason. For an answer over the result limit, or one the
 * database refused to store: the endpoint did the work, so the attempt is
 * neither failed (a retry would do the work again) nor left to its lease.
 * Rare, so one transaction per outcome, through the statement that takes any
 * task (workflow or ordering key), which then advances its workflow.
 */
export async function completeAttemptWithoutResult(
  db: Database,
  item: Omit<Completion, "result">,
  note: string,
  actor: string,
  horizonMs = DEFAULT_HORIZON_MS,
): Promise<Omit<FinishResult, "accepted">> {
  const done = await withTransaction(db.pool, async (client) => {
    const recorded = await recordCompletions(client, [{ ...item, result: null }], actor, horizonMs, COMPLETE_ANY_NOTED, note);
    return { ...recorded, workflows: await advanceWorkflows(client, recorded.accepted, actor, horizonMs) };
  });
  return {
    refused: done.ids.length > 0 ? [] : [item.taskId],
    dispatch: [...done.dispatch, ...done.workflows.dispatch],
    workflows: done.workflows,
  };
}

/**
 * A PULL worker's outcomes in the common case, in one statement: each item
 * fenced by its lease token (the task must be the tenant's and RUNNING under
 * that very token), for tasks outside workflows and without an ordering key.
 * The event names the worker the task's lease records. What it leaves (stale
 * or unknown leases, workflow and ordered tasks) is for the general path,
 * which reads each lease first to tell a missing task from a stale lease.
 */
function leasedCompletionSql(answer: TaskAnswer): string {
  return finishSql(
    `SELECT t.id, t.status AS from_status, t.lease_token AS old_token, i.result
     FROM (SELECT u.id, u.token, u.result FROM unnest($1::text[], $2::text[], $3::text[]) AS u(id, token, result) ORDER BY u.id) i
     CROSS JOIN LATERAL ${lockById("i.id", ["id", "status", "lease_token", "workflow_id", "ordering_key"], `${LOCKED_TASK}.tenant_id = $4`)} t
     WHERE t.status = 'RUNNING' AND t.lease_token = i.token AND t.workflow_id IS NULL AND t.ordering_key IS NULL`,
    SUCCEEDED_SET,
    `'SUCCEEDED'`,
    "NULL",
    "NULL",
    "COALESCE('worker:' || worker_id, 'worker')",
    false,
    false,
    answer,
    "NULL",
    "$5::bigint",
  );
}

const COMPLETE_LEASED: Record<TaskAnswer, string> = {
  tasks: leasedCompletionSql("tasks"),
  ids: leasedCompletionSql("ids"),
  budgeted: leasedCompletionSql("budgeted"),
  bodiless: leasedCompletionSql("bodiless"),
};

/** A PULL worker's successful outcome, fenced by the token of its lease. */
export interface LeaseCompletion {
  taskId: string;
  token: string;
  result: unknown;
}

/** Records what it can of `items` (see leasedCompletionSql): the ids it recorded, and their tasks when asked for. */
export async function completeLeasedPlainTasks(
  db: Database,
  tenantId: string,
  items: LeaseCompletion[],
  /** true: the tasks whole; false: ids alone (as "ids"). */
  withTasks: boolean | "ids" | TasksAnswer,
): Promise<{ ids: string[]; accepted: TaskRecord[] }> {
  if (items.length === 0) return { ids: [], accepted: [] };
  const answer = withTasks === true ? "tasks" : withTasks === false ? "ids" : withTasks;
  const budget = typeof answer === "object" ? answer : undefined;
  const res = await db.pool.query<Record<string, unknown>>(
    prepared(COMPLETE_LEASED[budget ? "budgeted" : (answer as TaskAnswer)], [
      items.map((i) => i.taskId),
      items.map((i) => i.token),
      items.map((i) => (i.result === undefined ? null : storableJson(JSON.stringify(i.result)))),
      tenantId,
      ...(budget ? [budget.bytes] : []),
    ]),
  );
  if (budget) budget.bytes = Math.max(0, budget.bytes - bodyBytesOf(res.rows));
  return { ids: res.rows.map((r) => r.id as string), accepted: answer === "ids" ? [] : res.rows.map(mapTaskRow) };
}

async function recordCompletions(
  q: Queryable,
  items: Completion[],
  actor: string,
  horizonMs: number,
  statement: CompletionStatement,
  note?: string,
  budget?: BodyBudget,
): Promise<{ ids: string[]; accepted: TaskRecord[]; dispatch: DispatchIntent[] }> {
  const res = await q.query<Record<string, unknown>>(
    prepared(statement.text, [
      items.map((i) => i.taskId),
      items.map((i) => i.leaseGeneration),
      items.map((i) => (i.result === undefined ? null : storableJson(JSON.stringify(i.result)))),
      actor,
      ...(statement.usesHorizon ? [horizonMs] : []),
      ...(statement.noted ? [storableText((note ?? "").slice(0, MAX_ERROR_LENGTH))] : []),
      ...(statement.budgeted ? [budget?.bytes ?? 0] : []),
    ]),
  );
  if (statement.budgeted && budget) budget.bytes = Math.max(0, budget.bytes - bodyBytesOf(res.rows));
  return {
    ids: res.rows.map((r) => r.id as string),
    accepted: statement.answersWithTasks ? res.rows.map(mapTaskRow) : [],
    dispatch: mapReleased(res.rows),
  };
}

export interface Failure {
  taskId: string;
  leaseGeneration: number;
  error: string;
  outcome: "FAILED" | "TIMED_OUT";
  /** Computed by the caller with core's decideAfterFailure from the task it leased. */
  decision: FailureDecision;
}

/**
 * Records a failed attempt: RETRYING after the backoff, or DEAD. A retry is
 * one autocommit statement; DEAD runs in a transaction that also skips what
 * depends on the task if it belongs to a workflow.
 */
export async function failAttempt(db: Database, failure: Failure, actor: string, horizonMs: number): Promise<FinishResult> {
  if (failure.decision.kind === "retry") return recordFailure(db.pool, failure, actor, horizonMs);
  return withTransaction(db.pool, async (client) => {
    const done = await recordFailure(client, failure, actor, horizonMs);
    const workflows = await advanceWorkflows(client, done.accepted, actor, horizonMs);
    return { ...done, dispatch: [...done.dispatch, ...workflows.dispatch], workflows };
  });
}

/**
 * The failure statement for one outcome: RETRYING after the backoff ($4 ms),
 * or DEAD. Built once each, like the completion statements.
 */
function failureSql(retry: boolean): string {
  return finishSql(
    `SELECT t.id, t.status AS from_status, t.lease_token AS old_token, $4::float8 AS delay_ms
     FROM ${lockById("$1", ["id", "status", "lease_generation", "lease_token"])} t
     WHERE t.status = 'RUNNING' AND t.lease_generation = $2`,
    retry
      ? `status = 'RETRYING', run_at = now() + cand.delay_ms * interval '1 millisecond', last_error = $3,
         dispatch_generation = t.dispatch_generation + 1,
         enqueued_generation = ${enqueuedGenerationExpr("t.dispatch_generation + 1", "now() + cand.delay_ms * interval '1 millisecond'", "$7::float8")}`
      : `status = 'DEAD', last_error = $3, completed_at = now()`,
    `$6::"AttemptOutcome"`,
    "$3",
    "$7::float8",
    "$5",
    retry,
  );
}

const FAIL_TO_RETRY = failureSql(true);
const FAIL_TO_DEAD = failureSql(false);

async function recordFailure(q: Queryable, failure: Failure, actor: string, horizonMs: number): Promise<FinishResult> {
  const retry = failure.decision.kind === "retry";
  const delayMs = failure.decision.kind === "retry" ? failure.decision.delayMs : 0;
  const res = await q.query(
    prepared(retry ? FAIL_TO_RETRY : FAIL_TO_DEAD, [
      failure.taskId,
      failure.leaseGeneration,
      storableText(failure.error.slice(0, MAX_ERROR_LENGTH)),
      delayMs,
      actor,
      failure.outcome,
      horizonMs,
    ]),
  );
  const accepted = res.rows.map(mapTaskRow);
  return {
    accepted,
    refused: accepted.length ? [] : [failure.taskId],
    dispatch: [
      ...res.rows.filter((r) => r.outbox_id != null).map((r) => mapDispatchRow({ ...r, task_id: r.id })),
      ...mapReleased(res.rows),
    ],
    workflows: noProgress(),
  };
}
