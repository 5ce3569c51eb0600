import { ANSWER_BODY_BYTES, newId, type TaskSpec, type TaskStatus } from "@tasklane/core";
import { queueGoneAsNotFound } from "../queues/queue-gone.js";
import type pg from "pg";
import { prepared, withTransaction, type Database, type Queryable } from "../database.js";
import { dispatchOutboxCtes, mapDispatchRow, type DispatchIntent } from "../outbox/dispatch-intent.js";
import { admitRuns, chargeQuotas, lookupQueuesAndQuotas, type TenantQuotas } from "./submit-quotas.js";
import { bodyBytesOf, withheldBodiesSql } from "./page-body-budget.js";
import { TASK_COLUMNS, TASK_COLUMN_NAMES_BUT_BODIES, mapTaskRow, taskColumnsOf, type TaskRecord } from "./task-record.js";
import { notifyOutboxInsert } from "../transitions/sql-fragments.js";

export interface SubmitOptions {
  /** Tasks due within this many ms get an outbox row now; later ones wait for the horizon promoter. */
  horizonMs: number;
  actor?: string;
  /**
   * Whether the tenant's quotas apply (submit-quotas.ts). true: new tasks
   * count toward submittedToday, and dailyTaskQuota / maxPendingTasks refuse
   * the batch with QUOTA_EXCEEDED. "skip" (cron runs): new tasks count the
   * same, but those past a quota are not refused: they are inserted SKIPPED,
   * lastError naming the quota (admitRuns), since refusing inside the firing
   * transaction would stall the other schedules of the batch. false: nothing
   * is counted or checked.
   * @defaultValue true
   */
  quotas?: boolean | "skip";
  /**
   * Starts the trace of a task that comes without a traceParent (cron runs,
   * workflow tasks) and returns its W3C traceparent; absent or null: none.
   */
  newTraceParent?: () => string | null;
  /**
   * Bytes of payloads and results the answer may carry of tasks that specs
   * repeat (an existing key): what is left of the request's AnswerBudget.
   * Past it, in input order, those tasks come back with their bodies
   * withheld (WITHHELD_BODY): 1,000 keys repeating tasks of 256 KiB
   * payloads read 256 MB for a request of a few KiB. New tasks' bodies are
   * the request's own (bounded by its size) and are not counted.
   * @defaultValue ANSWER_BODY_BYTES
   */
  repeatBodyBytes?: number;
}

/** A task to insert: the API's spec plus what schedules and workflows attach. */
export interface TaskInsert extends TaskSpec {
  scheduleId?: string | null;
  /** (schedule id, scheduled time), core occurrenceKey; unique, so a cron occurrence materialises once whatever versions the schedule goes through. */
  occurrenceKey?: string | null;
  workflowId?: string | null;
  workflowKey?: string | null;
  /** Overrides QUEUED/SCHEDULED: BLOCKED (workflow dependencies) or SKIPPED (schedule policy). */
  initialStatus?: "BLOCKED" | "SKIPPED" | null;
  /** W3C traceparent the task's trace continues from (attempts, dispatches and deliveries are its children). */
  traceParent?: string | null;
  /** Why a task inserted SKIPPED was (tasks.last_error and its event's reason); set by admitRuns. */
  lastError?: string | null;
  /** The finished task this one replays (replayTask; core's task-replay.ts); its creation event's reason names it. */
  replayOf?: string | null;
}

export interface SubmitResult<T = TaskRecord> {
  /** In input order; an idempotent repeat returns the first task. */
  tasks: T[];
  /** Dispatch intents of newly created PUSH tasks, for the post-commit fast path. */
  dispatch: DispatchIntent[];
  /** How many of `tasks` this call created, the rest being repeats of a key. */
  created: number;
  /**
   * Per task, in input order: null where this call created it; where its spec
   * repeated a key (of an earlier submission, or of an earlier spec of the
   * same batch), the trace the existing task holds (tasks.trace_parent). Taken
   * from rows the submission reads anyway, so a caller marking repeats (the
   * submit span) makes no query of its own, whichever answer shape it asked for.
   * bodyBytes: what the repeated task's payload and result the answer carries
   * (0 when withheld, or when the answer carries no bodies), so each merged
   * request can spend its own share of its answer budget.
   */
  repeatOf: ({ traceParent: string | null; bodyBytes: number } | null)[];
}

/** What a submitter acts on when it does not read the tasks back: which task each spec became, where, in which state. */
export interface SubmittedTaskRef {
  id: string;
  queueId: string;
  status: TaskStatus;
}

/**
 * How a submission answers. `tasks`: each task whole. `refs`: only
 * SubmittedTaskRef, for callers that read nothing else back (an API call
 * asking only for ids, cron firings, workflows). Reading 500 new rows whole
 * (their JSON, six timestamps, the queue's name) cost ~8 µs per task of
 * Postgres CPU and ~4 of the caller's.
 */
interface AnswerShape<T> {
  byQueueIds: string;
  byQueueNames: string;
  /** Reads the tasks repeated keys name: $1 tenant, $2/$3 each repeat's idempotency/occurrence key (or null) in input order, $4 the bytes of bodies left. */
  repeats: string;
  map(row: Record<string, unknown>): T;
}

/**
 * Inserts a batch of tasks, their creation events and their outbox rows
 * atomically (all or nothing). Idempotency keys are enforced by the
 * (tenant_id, idempotency_key) unique index with ON CONFLICT, never by
 * read-then-write, so concurrent submissions of one key yield one task.
 *
 * A tenant without quotas, naming only queues it has, is served by a single
 * autocommit statement that also resolves the queue names and counts the
 * day's usage: one round trip instead of five (BEGIN, lookup, insert, COMMIT
 * and the usage upsert). Otherwise — quotas to check under the tenant's lock,
 * or an unknown queue to report — the statement inserts nothing and the
 * batch goes through the transaction.
 */
export async function submitTasks(db: Database, tenantId: string, specs: TaskInsert[], options: SubmitOptions): Promise<SubmitResult> {
  return submitShaped(db, tenantId, specs, options, WHOLE_TASKS);
}

/** submitTasks answering only each task's SubmittedTaskRef. */
export async function submitTaskRefs(db: Database, tenantId: string, specs: TaskInsert[], options: SubmitOptions): Promise<SubmitResult<SubmittedTaskRef>> {
  return submitShaped(db, tenantId, specs, options, TASK_REFS);
}

async function submitShaped<T>(db: Database, tenantId: string, specs: TaskInsert[], options: SubmitOptions, shape: AnswerShape<T>): Promise<SubmitResult<T>> {
  if (specs.length === 0) return { tasks: [], dispatch: [], created: 0, repeatOf: [] };
  // A queue deleted while the insert waited for its key is NOT_FOUND, as a name no queue has (queue-gone.ts).
  return queueGoneAsNotFound(async () => {
    if ((options.quotas ?? true) === true) {
      const done = await insertTasksIfUncapped(db, tenantId, specs, options, shape);
      if (done) return done;
    }
    return withTransaction(db.pool, (client) => insertShaped(client, tenantId, specs, options, shape));
  }, () => specs.map((s) => s.queue));
}

/**
 * The insert itself, inside the caller's transaction (schedules and workflows
 * add their own rows in the same one). A spec whose idempotency key or
 * occurrence key already exists yields the existing task.
 */
export async function insertTasks(client: pg.PoolClient, tenantId: string, specs: TaskInsert[], options: SubmitOptions): Promise<SubmitResult> {
  return insertShaped(client, tenantId, specs, options, WHOLE_TASKS);
}

/** insertTasks answering only each task's SubmittedTaskRef. */
export async function insertTaskRefs(
  client: pg.PoolClient,
  tenantId: string,
  specs: TaskInsert[],
  options: SubmitOptions,
): Promise<SubmitResult<SubmittedTaskRef>> {
  return insertShaped(client, tenantId, specs, options, TASK_REFS);
}

async function insertShaped<T>(
  client: pg.PoolClient,
  tenantId: string,
  specs: TaskInsert[],
  options: SubmitOptions,
  shape: AnswerShape<T>,
): Promise<SubmitResult<T>> {
  const queueNames = [...new Set(specs.map((s) => s.queue))];
  const mode = options.quotas ?? true;
  const { queueIds, quotas } = await lookupQueuesAndQuotas(client, tenantId, queueNames, mode !== false);
  const capped = quotas.dailyTaskQuota !== null || quotas.maxPendingTasks !== null;
  // Cron runs past a quota become SKIPPED runs saying which; the insert then counts the others (slot 0 under a daily quota).
  const rows = mode === "skip" ? await skipPastQuotas(client, tenantId, specs, quotas) : specs;
  const usage = usageCount(mode, quotas);
  const ids = rows.map(() => newId("task"));
  const inserted = await client.query(
    prepared(shape.byQueueIds, insertParams(tenantId, ids, rows.map((s) => queueIds.get(s.queue) as string), rows, options, usage)),
  );
  const resolved = await resolveSubmitted(client, tenantId, rows, ids, inserted.rows, shape, options.repeatBodyBytes ?? ANSWER_BODY_BYTES);
  // Charged last, so the daily usage row stays locked for as short a time as possible.
  if (mode === true && capped) await chargeQuotas(client, tenantId, resolved.created, quotas);
  return resolved;
}

/**
 * How the insert statement counts the day's usage itself: not at all (false
 * quotas, or chargeQuotas does it after), in this session's own row (no daily
 * quota to check), or in the tenant's slot-0 row a daily quota is checked on
 * (cron runs admitted by admitRuns, which locked that row).
 */
type UsageCount = "none" | "session-row" | "quota-row";

function usageCount(mode: NonNullable<SubmitOptions["quotas"]>, quotas: TenantQuotas): UsageCount {
  if (mode === false) return "none";
  if (mode === "skip") return quotas.dailyTaskQuota !== null ? "quota-row" : "session-row";
  return quotas.dailyTaskQuota === null && quotas.maxPendingTasks === null ? "session-row" : "none";
}

/** `specs` with the runs the tenant's quotas do not admit now turned SKIPPED, their reason in lastError (the earliest in input order are admitted). */
async function skipPastQuotas(client: pg.PoolClient, tenantId: string, specs: TaskInsert[], quotas: TenantQuotas): Promise<TaskInsert[]> {
  const runs = specs.filter((s) => s.initialStatus == null).length;
  const { admitted, reason } = await admitRuns(client, tenantId, runs, quotas);
  if (reason === null) return specs;
  let left = admitted;
  return specs.map((s) => {
    if (s.initialStatus != null) return s;
    if (left > 0) {
      left -= 1;
      return s;
    }
    return { ...s, initialStatus: "SKIPPED", lastError: reason };
  });
}

/** submitTasks' one-statement path; null when the tenant has quotas or names a queue it lacks (nothing was written). */
async function insertTasksIfUncapped<T>(
  db: Database,
  tenantId: string,
  specs: TaskInsert[],
  options: SubmitOptions,
  shape: AnswerShape<T>,
): Promise<SubmitResult<T> | null> {
  const ids = specs.map(() => newId("task"));
  const inserted = await db.pool.query(prepared(shape.byQueueNames, insertParams(tenantId, ids, specs.map((s) => s.queue), specs, options, "session-row")));
  if (inserted.rows[0]?.go !== true) return null;
  return resolveSubmitted(db.pool, tenantId, specs, ids, inserted.rows.filter((r) => r.task_id != null), shape, options.repeatBodyBytes ?? ANSWER_BODY_BYTES);
}

/**
 * The read of the tasks that specs' keys repeat. `tasks`: each whole, but
 * that past $4 bytes of payloads and results, in the order of the specs
 * naming them (a task's first), its bodies are withheld (withheldBodiesSql).
 * `refs`: what SubmittedTaskRef and the matching need, no bodies at all.
 */
function repeatsStatement(answer: "tasks" | "refs"): string {
  if (answer === "refs") {
    return `SELECT t.id, t.queue_id, t.status, t.idempotency_key, t.occurrence_key, t.trace_parent FROM tasks t
       WHERE t.tenant_id = $1 AND (t.idempotency_key = ANY($2::text[]) OR t.occurrence_key = ANY($3::text[])) AND $4::bigint IS NOT NULL`;
  }
  // Each task once, at the place of the first spec naming it. One probe of a unique index per key and of the
  // primary key per task: LIMIT 1 (each is unique) keeps a plan cached while tasks was small from flattening
  // the probes into a scan of the tenant's tasks (as in pull-leases.ts completeLooked).
  const candidates = `SELECT ${TASK_COLUMNS}, hit.ord AS repeat_ord
     FROM (SELECT h.id, min(h.ord) AS ord FROM (
             SELECT k.id, r.ord FROM unnest($2::text[]) WITH ORDINALITY AS r(key, ord)
               CROSS JOIN LATERAL (SELECT t.id FROM tasks t WHERE t.tenant_id = $1 AND t.idempotency_key = r.key LIMIT 1) k
             UNION ALL
             SELECT k.id, r.ord FROM unnest($3::text[]) WITH ORDINALITY AS r(key, ord)
               CROSS JOIN LATERAL (SELECT t.id FROM tasks t WHERE t.occurrence_key = r.key AND t.tenant_id = $1 LIMIT 1) k
           ) h GROUP BY h.id) hit
     CROSS JOIN LATERAL (SELECT * FROM tasks t0 WHERE t0.id = hit.id LIMIT 1) t
     JOIN queues q ON q.id = t.queue_id`;
  return withheldBodiesSql(candidates, TASK_COLUMN_NAMES_BUT_BODIES, "repeat_ord, id", "$4::bigint");
}

/**
 * The insert statement. `queue-ids`: $3 holds queue ids the caller looked up.
 * `queue-names`: $3 holds queue names, resolved here, and the statement
 * writes only if every name resolves and the tenant has no quotas; its rows
 * then start with a `go` column (always at least one row, the flag alone when
 * nothing was written).
 */
function insertStatement(queues: "queue-ids" | "queue-names", answer: "tasks" | "refs"): string {
  const byName = queues === "queue-names";
  const go = byName
    ? `go AS (
         SELECT coalesce((SELECT t.max_pending_tasks IS NULL AND t.daily_task_quota IS NULL FROM tenants t WHERE t.id = $1), false)
           AND (SELECT count(*) FROM queues gq WHERE gq.tenant_id = $1 AND gq.name = ANY($3::text[]))
             = (SELECT count(DISTINCT n) FROM unnest($3::text[]) AS n) AS ok
       ),`
    : "";
  const queueJoin = byName ? "JOIN queues iq ON iq.tenant_id = $1 AND iq.name = i.queue_ref" : "JOIN queues iq ON iq.id = i.queue_ref";
  const rows =
    answer === "tasks"
      ? `SELECT ${taskColumnsOf("ins")}, ins.id AS task_id, ob.outbox_id
       FROM ins JOIN queues q ON q.id = ins.queue_id LEFT JOIN ob ON ob.task_id = ins.id`
      : // The ref, the keys a repeat is matched by, and what a dispatch intent needs.
        `SELECT ins.id, ins.queue_id, ins.status, ins.idempotency_key, ins.occurrence_key, ins.tenant_id, ins.priority,
         ins.run_at, ins.dispatch_generation, ins.trace_parent, ins.id AS task_id, ob.outbox_id
       FROM ins LEFT JOIN ob ON ob.task_id = ins.id`;
  return `WITH ${go}
       input AS (
         SELECT * FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::"Priority"[], $7::timestamptz[],
           $8::int[], $9::"BackoffStrategy"[], $10::float8[], $11::float8[], $12::bool[], $13::int[], $14::text[],
           $15::text[], $16::text[], $17::text[], $20::text[], $21::text[], $22::text[], $23::text[], $24::text[], $25::text[],
           $28::text[], $29::text[])
           WITH ORDINALITY
         AS i(id, queue_ref, type, payload, priority, run_at, max_attempts, backoff_strategy, backoff_delay_seconds,
              backoff_max_delay_seconds, backoff_jitter, timeout_seconds, idempotency_key, ordering_key, callback_url,
              metadata, schedule_id, occurrence_key, workflow_id, workflow_key, initial_status, trace_parent, last_error,
              replay_of, ord)
         ${byName ? "WHERE (SELECT ok FROM go)" : ""}
       ),
       ins AS (
         INSERT INTO tasks (id, tenant_id, queue_id, type, payload, status, priority, run_at, max_attempts,
           backoff_strategy, backoff_delay_seconds, backoff_max_delay_seconds, backoff_jitter, timeout_seconds,
           idempotency_key, ordering_key, callback_url, metadata, schedule_id, occurrence_key, workflow_id,
           workflow_key, completed_at, dispatch_generation, enqueued_generation, trace_parent, last_error, replay_of)
         SELECT i.id, $1, iq.id, i.type, i.payload::jsonb,
           (CASE WHEN i.initial_status IS NOT NULL THEN i.initial_status
                 WHEN i.run_at <= now() THEN 'QUEUED' ELSE 'SCHEDULED' END)::"TaskStatus",
           i.priority, i.run_at, i.max_attempts, i.backoff_strategy, i.backoff_delay_seconds,
           i.backoff_max_delay_seconds, i.backoff_jitter, i.timeout_seconds, i.idempotency_key, i.ordering_key,
           i.callback_url, i.metadata::jsonb, i.schedule_id, i.occurrence_key, i.workflow_id, i.workflow_key,
           CASE WHEN i.initial_status = 'SKIPPED' THEN now() END, 1,
           -- The outbox row written below hands generation 1 over; PULL tasks never go to Redis.
           CASE WHEN iq.mode = 'PULL' OR i.run_at <= now() + $19::float8 * interval '1 millisecond' THEN 1 ELSE 0 END,
           i.trace_parent, i.last_error, i.replay_of
         -- Rows with a key go in key order: each waits on a concurrent statement inserting the same
         -- key, and two statements taking their keys in different orders deadlocked (one refused whole).
         FROM input i ${queueJoin} ORDER BY i.idempotency_key NULLS FIRST, i.occurrence_key NULLS FIRST, i.ord
         -- Any unique key: (tenant, idempotency key) or the cron occurrence key.
         ON CONFLICT DO NOTHING
         RETURNING *
       ),
       ev AS (
         INSERT INTO task_events (task_id, tenant_id, from_status, to_status, attempt, lease_generation, actor, reason)
         SELECT id, tenant_id, NULL, status, 0, 0, $18, coalesce(last_error, 'replay of ' || replay_of) FROM ins
       ),
       -- A schedule's run SKIPPED by its misfire or overlap policy is born terminal: task.skipped, as for any other.
       nt AS (${notifyOutboxInsert("ins")}),
       ${dispatchOutboxCtes("ob", "ins", "$19::float8")},
       -- Tenants without quotas count today's submissions here, in this session's own usage
       -- row (submit-quotas.ts), saving a round trip; with a quota, chargeQuotas checks it after.
       -- Cron runs admitted under a daily quota ($27) count in its row, slot 0, which admitRuns locked.
       -- Runs born SKIPPED (schedule policy, quotas) never run and do not count.
       usage AS (
         INSERT INTO tenant_daily_usage AS u (tenant_id, day, slot, submitted)
         SELECT $1, (now() AT TIME ZONE 'UTC')::date, CASE WHEN $27::bool THEN 0 ELSE pg_backend_pid() END, count(*) FROM ins
         WHERE ins.status <> 'SKIPPED'
         HAVING $26::bool AND count(*) > 0
         ON CONFLICT (tenant_id, day, slot) DO UPDATE SET submitted = u.submitted + EXCLUDED.submitted
       )
       -- The new rows whole, so the common case (no idempotent repeat) needs no second read.
       ${byName ? `SELECT g.ok AS go, r.* FROM go g LEFT JOIN (${rows}) r ON true` : rows}`;
}

// Built once: the text is the same for every submission.
const WHOLE_TASKS: AnswerShape<TaskRecord> = {
  byQueueIds: insertStatement("queue-ids", "tasks"),
  byQueueNames: insertStatement("queue-names", "tasks"),
  repeats: repeatsStatement("tasks"),
  map: mapTaskRow,
};
const TASK_REFS: AnswerShape<SubmittedTaskRef> = {
  byQueueIds: insertStatement("queue-ids", "refs"),
  byQueueNames: insertStatement("queue-names", "refs"),
  repeats: repeatsStatement("refs"),
  map: (row) => ({ id: row.id as string, queueId: row.queue_id as string, status: row.status as TaskStatus }),
};

function insertParams(tenantId: string, ids: string[], queueRefs: string[], specs: TaskInsert[], options: SubmitOptions, usage: UsageCount): unknown[] {
  return [
    tenantId,
    ids,
    queueRefs,
    specs.map((s) => s.type),
    specs.map((s) => (s.payload == null ? null : JSON.stringify(s.payload))),
    specs.map((s) => s.priority),
    specs.map((s) => s.runAt.toISOString()),
    specs.map((s) => s.maxAttempts),
    specs.map((s) => s.backoff.strategy),
    specs.map((s) => s.backoff.delaySeconds),
    specs.map((s) => s.backoff.maxDelaySeconds ?? null),
    specs.map((s) => s.backoff.jitter ?? false),
    specs.map((s) => s.timeoutSeconds),
    specs.map((s) => s.idempotencyKey),
    specs.map((s) => s.orderingKey),
    specs.map((s) => s.callbackUrl),
    specs.map((s) => (s.metadata == null ? null : JSON.stringify(s.metadata))),
    options.actor ?? "api",
    options.horizonMs,
    specs.map((s) => s.scheduleId ?? null),
    specs.map((s) => s.occurrenceKey ?? null),
    specs.map((s) => s.workflowId ?? null),
    specs.map((s) => s.workflowKey ?? null),
    specs.map((s) => s.initialStatus ?? null),
    specs.map((s) => s.traceParent ?? options.newTraceParent?.() ?? null),
    usage !== "none",
    usage === "quota-row",
    specs.map((s) => s.lastError ?? null),
    // Empty unless a spec replays a task: unnest pads a shorter array with NULLs, so a submission
    // pays for no array of nulls.
    specs.some((s) => s.replayOf != null) ? specs.map((s) => s.replayOf ?? null) : [],
  ];
}

/**
 * Each spec's task in input order, from the inserted rows plus, for repeats
 * (an idempotency or occurrence key that already existed), the stored task.
 * After an autocommit insert the repeats are read in a new snapshot: ON
 * CONFLICT waited for the conflicting row's transaction, so it is committed.
 */
async function resolveSubmitted<T>(
  q: Queryable,
  tenantId: string,
  specs: TaskInsert[],
  ids: string[],
  insertedRows: Record<string, unknown>[],
  shape: AnswerShape<T>,
  budget: number,
): Promise<SubmitResult<T>> {
  const dispatch = insertedRows.filter((r) => r.outbox_id != null).map(mapDispatchRow);
  const insertedIds = new Set(insertedRows.map((r) => r.task_id as string));
  const repeats = specs.filter((_, i) => !insertedIds.has(ids[i] as string));
  // Nothing more to read (and no statement) when every spec created its task: the hot path.
  const existing =
    repeats.length === 0
      ? []
      : (
          await q.query(
            prepared(shape.repeats, [
              tenantId,
              repeats.map((s) => s.idempotencyKey ?? null),
              repeats.map((s) => s.occurrenceKey ?? null),
              budget,
            ]),
          )
        ).rows;
  type Found = { task: T; traceParent: string | null };
  const byId = new Map<string, Found>();
  const byKey = new Map<string, Found>();
  const byOccurrence = new Map<string, Found>();
  // What each repeated task's bodies cost the answer (only repeats are measured).
  const repeatBytes = new Map<Found, number>();
  const index = (row: Record<string, unknown>): Found => {
    const found = { task: shape.map(row), traceParent: (row.trace_parent as string | null | undefined) ?? null };
    byId.set(row.id as string, found);
    const key = row.idempotency_key as string | null;
    if (key != null) byKey.set(key, found);
    const occurrence = row.occurrence_key as string | null;
    if (occurrence != null) byOccurrence.set(occurrence, found);
    return found;
  };
  for (const row of insertedRows) index(row);
  for (const row of existing) {
    // A key repeated inside the batch reads back the row this batch inserted: the insert's copy stands (never withheld).
    if (!insertedIds.has(row.id as string)) repeatBytes.set(index(row), bodyBytesOf([row]));
  }
  const tasks: T[] = [];
  const repeatOf: SubmitResult<T>["repeatOf"] = [];
  specs.forEach((spec, i) => {
    const id = ids[i] as string;
    // A key repeated inside one batch resolves to the row that won the insert.
    const found =
      (spec.idempotencyKey != null ? byKey.get(spec.idempotencyKey) : undefined) ??
      (spec.occurrenceKey != null ? byOccurrence.get(spec.occurrenceKey) : undefined) ??
      byId.get(id);
    if (!found) throw new Error(`submitted task ${id} vanished inside its own transaction`);
    tasks.push(found.task);
    // Created here only if the row is the one inserted under this spec's own id.
    repeatOf.push(insertedIds.has(id) ? null : { traceParent: found.traceParent, bodyBytes: repeatBytes.get(found) ?? 0 });
  });
  return { tasks, dispatch, created: insertedIds.size, repeatOf };
}
