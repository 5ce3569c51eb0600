/**
 * Pull-mode worker calls (contract: leaseTasks, heartbeat, completeTask,
 * failTask). Most users want the Worker class, which drives these.
 */
import { MAX_ERROR_LENGTH } from "@tasklane/core/limits";
import { ErrorCode, isTasklaneError } from "../errors.js";
import { TASK_FIELDS } from "../graphql/fragments.js";
import { cutText, storableText } from "../storable-text.js";
import { checkResult } from "../validate.js";
import type { CallOptions, GraphQLTransport, RetryLog } from "../transport.js";
import type { HeartbeatResult, Lease, LeaseRequest, Task, TaskCompletion, TaskCompletionOutcome } from "../types.js";
import { recordedOutcomes, type LeaseRef, type RecordedOutcome } from "./recorded-outcomes.js";

/** Options of the outcome calls (complete, completeMany, settleMany, fail). */
export interface OutcomeCallOptions extends CallOptions {
  /**
   * An earlier call with this outcome may have been recorded though its answer never came
   * (it timed out, the connection reset). A CONFLICT is then checked against the attempt
   * the lease started, and answered as the success it was when that attempt ended with
   * this outcome. The SDK does the same by itself when it repeats a call after such a failure.
   * @defaultValue false
   */
  resend?: boolean;
}

const LEASE = `mutation LeaseTasks($queue: String!, $workerId: String!, $max: Int, $leaseSeconds: Int, $waitSeconds: Float, $startAheadMs: Int) {
  leaseTasks(queue: $queue, workerId: $workerId, max: $max, leaseSeconds: $leaseSeconds, waitSeconds: $waitSeconds, startAheadMs: $startAheadMs) {
    task { ...TaskFields } leaseToken leaseExpiresAt startInMs waitedMs parents
  }
}
${TASK_FIELDS}`;
const HEARTBEAT = `mutation Heartbeat($taskId: ID!, $leaseToken: String!, $extendSeconds: Int) {
  heartbeat(taskId: $taskId, leaseToken: $leaseToken, extendSeconds: $extendSeconds) { leaseExpiresAt cancelRequested }
}`;
const COMPLETE = `mutation CompleteTask($taskId: ID!, $leaseToken: String!, $result: JSON) {
  completeTask(taskId: $taskId, leaseToken: $leaseToken, result: $result) { ...TaskFields }
}
${TASK_FIELDS}`;
const COMPLETE_MANY = `mutation CompleteTasks($completions: [TaskCompletionInput!]!) {
  completeTasks(completions: $completions) { taskId accepted code message task { ...TaskFields } }
}
${TASK_FIELDS}`;
/** completeTasks answering only whether each outcome was recorded: what a Worker needs, at a fraction of the response. */
const SETTLE_MANY = `mutation SettleTasks($completions: [TaskCompletionInput!]!) {
  completeTasks(completions: $completions) { taskId accepted code message }
}`;
const FAIL = `mutation FailTask($taskId: ID!, $leaseToken: String!, $error: String!, $retryable: Boolean) {
  failTask(taskId: $taskId, leaseToken: $leaseToken, error: $error, retryable: $retryable) { ...TaskFields }
}
${TASK_FIELDS}`;

export class LeasesResource {
  readonly #transport: GraphQLTransport;

  constructor(transport: GraphQLTransport) {
    this.#transport = transport;
  }

  /**
   * Leases up to `max` tasks of a PULL queue. With waitSeconds it long-polls:
   * it returns as soon as one task can be leased, or empty when the wait ends.
   * The call's timeout is the client's timeoutMs plus waitSeconds.
   */
  async lease<TPayload = unknown>(request: LeaseRequest, opts: CallOptions = {}): Promise<Lease<TPayload>[]> {
    const waitMs = (request.waitSeconds ?? 0) * 1000;
    const data = await this.#transport.execute<{ leaseTasks: Lease<TPayload>[] }>(
      // Not idempotent: a repeat after a lost response would lease more tasks, and
      // the first batch would sit unused until its leases expire.
      { operation: "leaseTasks", document: LEASE, idempotent: false },
      { ...request },
      { ...opts, timeoutMs: (opts.timeoutMs ?? this.#transport.timeoutMs) + waitMs },
    );
    return data.leaseTasks;
  }

  /**
   * Extends the lease by `extendSeconds` (never past the task's timeout).
   * A stale token is CONFLICT: the lease is gone and the outcome will be refused.
   */
  async heartbeat(taskId: string, leaseToken: string, extendSeconds?: number, opts?: CallOptions): Promise<HeartbeatResult> {
    const data = await this.#transport.execute<{ heartbeat: HeartbeatResult }>(
      { operation: "heartbeat", document: HEARTBEAT, idempotent: true },
      { taskId, leaseToken, extendSeconds },
      opts,
    );
    return data.heartbeat;
  }

  /**
   * Records success with a JSON result. Retried after ambiguous failures: the
   * lease token makes a repeat harmless (never applied twice; the gateway refuses
   * it with CONFLICT, which the SDK recognises as its own completion and answers
   * with the task, see OutcomeCallOptions.resend).
   */
  async complete(taskId: string, leaseToken: string, result?: unknown, opts: OutcomeCallOptions = {}): Promise<Task> {
    checkResult("completeTask", result);
    const variables = { taskId, leaseToken, result: result === undefined ? null : result };
    return this.#outcomeCall("completeTask", COMPLETE, variables, { taskId, leaseToken }, "SUCCEEDED", opts);
  }

  /**
   * completeTask for many leases in one call (at most 500, each task once).
   * Each item is fenced by its own token: a refused one (its `code` is
   * CONFLICT, NOT_FOUND or BAD_USER_INPUT) does not affect the others.
   */
  completeMany(completions: TaskCompletion[], opts?: OutcomeCallOptions): Promise<TaskCompletionOutcome[]> {
    return this.#completeTasks(COMPLETE_MANY, true, completions, opts);
  }

  /**
   * completeMany without the recorded tasks in the answer (each outcome's
   * `task` is absent): the gateway then skips mapping and serialising a full
   * task per item, which is most of such a call's cost.
   */
  settleMany(completions: TaskCompletion[], opts?: OutcomeCallOptions): Promise<Omit<TaskCompletionOutcome, "task">[]> {
    return this.#completeTasks(SETTLE_MANY, false, completions, opts);
  }

  /**
   * The completeTasks call behind completeMany and settleMany; `document` chooses what each
   * outcome carries (`withTasks`: the task too).
   */
  async #completeTasks(document: string, withTasks: true, completions: TaskCompletion[], opts?: OutcomeCallOptions): Promise<TaskCompletionOutcome[]>;
  async #completeTasks(document: string, withTasks: false, completions: TaskCompletion[], opts?: OutcomeCallOptions): Promise<Omit<TaskCompletionOutcome, "task">[]>;
  async #completeTasks(document: string, withTasks: boolean, completions: TaskCompletion[], opts: OutcomeCallOptions = {}): Promise<Array<Omit<TaskCompletionOutcome, "task"> & { task?: Task | null }>> {
    completions.forEach((c, i) => checkResult("completeTasks", c.result, `completions.${i}.result`));
    const { resend, ...call } = opts;
    const log: RetryLog = { ambiguous: resend === true };
    const data = await this.#transport.execute<{ completeTasks: Array<Omit<TaskCompletionOutcome, "task"> & { task?: Task | null }> }>(
      { operation: "completeTasks", document, idempotent: true },
      { completions: completions.map((c) => ({ taskId: c.taskId, leaseToken: c.leaseToken, result: c.result === undefined ? null : c.result })) },
      call,
      log,
    );
    const outcomes = data.completeTasks;
    if (!log.ambiguous) return outcomes;
    const tokens = new Map(completions.map((c) => [c.taskId, c.leaseToken]));
    const conflicts = outcomes.filter((o) => !o.accepted && o.code === ErrorCode.CONFLICT && tokens.has(o.taskId));
    if (conflicts.length === 0) return outcomes;
    const recorded = await recordedOutcomes(this.#transport, conflicts.map((o) => ({ taskId: o.taskId, leaseToken: tokens.get(o.taskId) as string })), "SUCCEEDED", withTasks, call);
    return outcomes.map((o) => {
      if (o.accepted || !recorded.has(o.taskId)) return o;
      return withTasks ? { taskId: o.taskId, accepted: true, task: recorded.get(o.taskId) ?? null, code: null, message: null } : { taskId: o.taskId, accepted: true, code: null, message: null };
    });
  }

  /**
   * Records a failed attempt: RETRYING after the backoff, or DEAD when attempts
   * are exhausted or `retryable` is false. Messages longer than 8,192 characters
   * are cut (never through a surrogate pair), and NUL or unpaired surrogates,
   * which the gateway refuses, become U+FFFD: a message the gateway cannot
   * store must not cost the outcome itself.
   */
  async fail(taskId: string, leaseToken: string, error: string, retryable?: boolean, opts: OutcomeCallOptions = {}): Promise<Task> {
    const variables = { taskId, leaseToken, error: storableText(cutText(error, MAX_ERROR_LENGTH)), retryable };
    return this.#outcomeCall("failTask", FAIL, variables, { taskId, leaseToken }, "FAILED", opts);
  }

  /**
   * One completeTask / failTask call, answering its task. When it fails with a CONFLICT after a
   * lost answer and the lease's attempt ended with this very `outcome`, the call succeeded after
   * all: the task is read and answered; any other error stands.
   */
  async #outcomeCall(
    operation: "completeTask" | "failTask",
    document: string,
    variables: Record<string, unknown>,
    lease: LeaseRef,
    outcome: RecordedOutcome,
    opts: OutcomeCallOptions,
  ): Promise<Task> {
    const { resend, ...call } = opts;
    const log: RetryLog = { ambiguous: resend === true };
    try {
      const data = await this.#transport.execute<Record<string, Task>>({ operation, document, idempotent: true }, variables, call, log);
      return data[operation] as Task;
    } catch (error: unknown) {
      if (!log.ambiguous || !isTasklaneError(error, ErrorCode.CONFLICT)) throw error;
      const recorded = (await recordedOutcomes(this.#transport, [lease], outcome, true, call)).get(lease.taskId);
      if (recorded == null) throw error;
      return recorded;
    }
  }
}
