/**
 * The one seam between the gateway and packages/db's task functions (the
 * transition module owns every status write). Each method takes parsed,
 * normalised input and the tenant from the caller's key; after a commit that
 * produced dispatch intents it runs the post-commit fast path, whose failure
 * is only logged because the outbox row delivers the task anyway.
 */
import { OverloadedError, type TaskSpec } from "@tasklane/core";
import type { DeadLetterBatchArgs } from "@tasklane/core/schemas/dead-letter-batch";
import {
  cancelTask,
  getTask,
  getTasks,
  listAttempts,
  listTaskAuditEvents,
  listTasks,
  readReplayOf,
  redriveDeadTasks,
  redriveTask,
  rescheduleTask,
  submitTaskRefs,
  submitTasks,
  withTenantScope,
  type AttemptRecord,
  type AuditPage,
  type Database,
  type DeadLetterBatchResult,
  type DispatchIntent,
  type Page,
  type SubmitResult,
  type SubmittedTaskRef,
  type TaskFilter,
  type TaskInsert,
  type TaskPage,
  type TaskAuditEventRecord,
  type TaskRecord,
} from "@tasklane/db";
import { startSubmitTrace, tracingActive, withFastPathSpans } from "@tasklane/observability";
import { dispatchAfterCommit, type TaskDispatcher } from "@tasklane/queue";
import type { Logger } from "../observability/logger.js";
import { SubmitCoalescer } from "./submit-coalescer.js";
import { leaveSlot } from "../limits/tenant-operations.js";

/** What a submission answers with whole tasks: the tasks, and the bytes of repeated tasks' bodies among them (what the answer spent). */
export interface SubmittedTasks {
  tasks: TaskRecord[];
  repeatBodyBytes: number;
}

export interface TaskService {
  /**
   * `traceParent`: the caller's own W3C traceparent, which each task's trace
   * then joins. Tasks the specs' keys repeat carry at most an answer's
   * ANSWER_BODY_BYTES of bodies; past it they are withheld (db SubmitOptions.repeatBodyBytes).
   */
  submit(tenantId: string, specs: TaskSpec[], actor: string, traceParent?: string | null): Promise<TaskRecord[]>;
  /** submit within what an answer has left for repeated tasks' bodies (`repeatBodyBytes`), saying what it spent of it. */
  submitWithin(tenantId: string, specs: TaskSpec[], actor: string, traceParent: string | null, repeatBodyBytes: number): Promise<SubmittedTasks>;
  /** submit for a caller that reads back no more than each task's id (and queue and status). */
  submitRefs(tenantId: string, specs: TaskSpec[], actor: string, traceParent?: string | null): Promise<SubmittedTaskRef[]>;
  get(tenantId: string, id: string): Promise<TaskRecord | null>;
  /** The tenant's tasks among `ids`, in one read, by id; absent ones (or another tenant's) are not in the map. */
  getMany(tenantId: string, ids: readonly string[]): Promise<Map<string, TaskRecord>>;
  list(tenantId: string, filter: TaskFilter, page: Page): Promise<TaskPage>;
  attempts(taskIds: string[]): Promise<Map<string, AttemptRecord[]>>;
  /** Audit trails (oldest first, a page per task) of tasks the caller may see. */
  events(tenantId: string, taskIds: string[], page: AuditPage): Promise<Map<string, TaskAuditEventRecord[]>>;
  cancel(tenantId: string, id: string, actor: string): Promise<TaskRecord>;
  /**
   * replayTask: submit's path and guards for one spec naming the task it replays (graphql/resolvers/task-replay.resolver.ts).
   * Its trace is new, as a submission's, and links to the original's (`originalTraceParent`).
   */
  replay(
    tenantId: string,
    spec: TaskSpec & Required<Pick<TaskInsert, "replayOf">>,
    actor: string,
    traceParent: string | null,
    originalTraceParent: string | null,
  ): Promise<TaskRecord>;
  /** Task.replayOf of tasks the tenant owns: only those that are replays are in the map. */
  replaysOf(tenantId: string, taskIds: readonly string[]): Promise<Map<string, string>>;
  redrive(tenantId: string, id: string, actor: string): Promise<TaskRecord>;
  /** Moves a waiting task's runAt (null: now); packages/db reschedule-task.ts. */
  reschedule(tenantId: string, id: string, runAt: Date | null, actor: string): Promise<TaskRecord>;
  /**
   * redrive for up to `args.max` dead tasks outside workflows, a statement at a time, each
   * dispatched after its commit. Platform backlog work: refused OVERLOADED when the backlog guard
   * refuses the first statement; a later refusal ends the call there (hasMore true).
   */
  redriveDeadLetters(tenantId: string, args: DeadLetterBatchArgs, actor: string): Promise<DeadLetterBatchResult>;
}

export interface TaskServiceDeps {
  db: Database;
  dispatcher: TaskDispatcher;
  log: Logger;
  /** Tasks due within this window go to Redis right after commit; later ones wait for the horizon promoter. */
  horizonMs: number;
  /** Wakes long-polling pull workers of these queues. */
  ringPullQueues(queueIds: string[]): Promise<void>;
  /** Tells the executor of a RUNNING task to stop (PUSH abort); best effort, heartbeats also report it. */
  announceCancel(taskId: string): Promise<void>;
  /** Platform protection: refuses submissions (OVERLOADED) while the global backlog is at its cap. */
  backlog?: { assertAccepting(tenantId: string, newTasks: number): void };
  /** Told how many tasks each submission statement created (an idempotent repeat creates none). */
  onCreated?: (tasks: number) => void;
}

export function createTaskService({ db, dispatcher, log, announceCancel, horizonMs, ringPullQueues, backlog, onCreated }: TaskServiceDeps): TaskService {
  const dispatch = (intents: DispatchIntent[]) =>
    withFastPathSpans(
      "task.dispatch",
      intents,
      (onError) => dispatchAfterCommit(db, dispatcher, intents, onError),
      (error: unknown) => log.warn({ err: error, count: intents.length }, "post-commit dispatch failed; the outbox will deliver"),
    );
  /**
   * Per task, the traceparent its task holds where the spec repeated an
   * idempotency key (the span is then marked a repeat and linked to it);
   * undefined where the submission created it. The submission's answer says
   * so, merged or not: no read back (it cost a getTask per keyed spec).
   */
  const storedTraceParents = (repeatOf: SubmitResult<unknown>["repeatOf"]) =>
    tracingActive() && repeatOf.some((r) => r !== null) ? repeatOf.map((r) => (r === null ? undefined : r.traceParent)) : undefined;
  // Insert and post-commit dispatch together: merged submissions share the dispatch call as well.
  const coalescing = <T extends SubmittedTaskRef>(
    insert: (tenantId: string, specs: TaskSpec[], actor: string, repeatBodyBytes: number) => Promise<SubmitResult<T>>,
  ) =>
    new SubmitCoalescer<T>(async (tenantId, specs, actor, repeatBodyBytes) => {
      const result = await insert(tenantId, specs, actor, repeatBodyBytes);
      // Counted here, once per statement rather than per merged request.
      onCreated?.(result.created);
      await dispatch(result.dispatch);
      return result;
    });
  // One coalescer per answer: a merged batch is one statement, and so one answer shape.
  const whole = coalescing((tenantId, specs, actor, repeatBodyBytes) => submitTasks(db, tenantId, specs, { horizonMs, actor, repeatBodyBytes }));
  // Refs read no bodies.
  const refs = coalescing((tenantId, specs, actor) => submitTaskRefs(db, tenantId, specs, { horizonMs, actor }));
  async function accept<T extends SubmittedTaskRef>(
    coalescer: SubmitCoalescer<T>,
    tenantId: string,
    specs: TaskSpec[],
    actor: string,
    traceParent: string | null,
    { repeatBodyBytes, linkedTraceParent = null }: { repeatBodyBytes?: number; linkedTraceParent?: string | null } = {},
  ): Promise<{ tasks: T[]; repeatOf: SubmitResult<T>["repeatOf"] }> {
    backlog?.assertAccepting(tenantId, specs.length);
    // Each task's trace starts here (tasks.trace_parent); its dispatch, attempts and deliveries join it.
    const trace = startSubmitTrace(specs.length, tenantId, traceParent, linkedTraceParent);
    const traced = trace.traceParents.some((p) => p !== null) ? specs.map((s, i) => ({ ...s, traceParent: trace.traceParents[i] ?? null })) : specs;
    let tasks: T[];
    let intents: DispatchIntent[];
    let repeatOf: SubmitResult<T>["repeatOf"];
    try {
      // The coalescer bounds the tenant's statements itself; holding the operation's slot too
      // would cap how many submissions it can merge (tenant-operations.ts).
      leaveSlot();
      ({ tasks, dispatch: intents, repeatOf } = await coalescer.submit(tenantId, traced, actor, repeatBodyBytes));
    } catch (error) {
      trace.finish([], error);
      throw error;
    }
    trace.finish(tasks.map((t) => t.id), undefined, storedTraceParents(repeatOf));
    const pushed = new Set(intents.map((i) => i.queueId));
    const pullQueues = tasks.filter((t) => t.status === "QUEUED" && !pushed.has(t.queueId)).map((t) => t.queueId);
    await ringPullQueues(pullQueues).catch((error: unknown) => log.warn({ err: error }, "could not ring pull workers"));
    return { tasks, repeatOf };
  }
  return {
    submit: async (tenantId, specs, actor, traceParent = null) => (await accept(whole, tenantId, specs, actor, traceParent)).tasks,
    async submitWithin(tenantId, specs, actor, traceParent, repeatBodyBytes) {
      const { tasks, repeatOf } = await accept(whole, tenantId, specs, actor, traceParent, { repeatBodyBytes });
      let spent = 0;
      for (const r of repeatOf) if (r !== null) spent += r.bodyBytes;
      return { tasks, repeatBodyBytes: spent };
    },
    submitRefs: async (tenantId, specs, actor, traceParent = null) => (await accept(refs, tenantId, specs, actor, traceParent)).tasks,
    // Reads run confined to the tenant by row-level security (defence in depth; packages/db tenant-scope.ts).
    get: (tenantId, id) => withTenantScope(db.pool, tenantId, (client) => getTask({ pool: client }, tenantId, id)),
    getMany: (tenantId, ids) => withTenantScope(db.pool, tenantId, (client) => getTasks({ pool: client }, tenantId, ids)),
    list: (tenantId, filter, page) => withTenantScope(db.pool, tenantId, (client) => listTasks({ pool: client }, tenantId, filter, page)),
    attempts: (taskIds) => listAttempts(db, taskIds),
    events: (tenantId, taskIds, page) =>
      withTenantScope(db.pool, tenantId, (client) => listTaskAuditEvents({ pool: client }, tenantId, taskIds, page)),
    async replay(tenantId, spec, actor, traceParent, originalTraceParent) {
      const [task] = (await accept(whole, tenantId, [spec], actor, traceParent, { linkedTraceParent: originalTraceParent })).tasks;
      if (task === undefined) throw new Error("a replay's submission returned no task");
      return task;
    },
    // One statement on the pool, no scoped transaction (four round trips): the tasks are the answer's own, and the read names the tenant.
    replaysOf: (tenantId, taskIds) => readReplayOf(db, tenantId, taskIds),
    async cancel(tenantId, id, actor) {
      const { task, wasRunning, dispatch: released } = await cancelTask(db, tenantId, id, actor, horizonMs);
      await dispatch(released);
      if (wasRunning) {
        await announceCancel(task.id).catch((error: unknown) => log.warn({ err: error, taskId: task.id }, "could not announce cancellation"));
      }
      return task;
    },
    async redrive(tenantId, id, actor) {
      const { task, dispatch: intents } = await redriveTask(db, tenantId, id, actor, horizonMs);
      await dispatch(intents);
      if (intents.length === 0) await ringPullQueues([task.queueId]).catch(() => undefined);
      return task;
    },
    async reschedule(tenantId, id, runAt, actor) {
      const { task, dispatch: intents } = await rescheduleTask(db, tenantId, id, runAt, actor, horizonMs);
      await dispatch(intents);
      // A PULL task now due: its queue's long polls are told at once.
      if (intents.length === 0 && task.status === "QUEUED") await ringPullQueues([task.queueId]).catch(() => undefined);
      return task;
    },
    redriveDeadLetters: (tenantId, args, actor) =>
      redriveDeadTasks(db, tenantId, {
        queue: args.queue,
        max: args.max,
        actor,
        horizonMs,
        // Tasks coming back to pending are platform backlog like submissions (quotas never refuse them:
        // submit-quotas.ts). The first statement's refusal is the call's; after that the work done is
        // answered and the next call meets the refusal.
        beforeBatch(size, done) {
          if (done === 0) {
            backlog?.assertAccepting(tenantId, size);
            return true;
          }
          try {
            backlog?.assertAccepting(tenantId, size);
            return true;
          } catch (error: unknown) {
            if (error instanceof OverloadedError) return false;
            throw error;
          }
        },
        async afterBatch(batch) {
          await dispatch(batch.dispatch);
          if (batch.pullQueueIds.length > 0) await ringPullQueues(batch.pullQueueIds).catch((error: unknown) => log.warn({ err: error }, "could not ring pull workers"));
        },
      }),
  };
}
