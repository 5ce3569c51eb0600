/**
 * Pull-mode worker calls (contract: leaseTasks, heartbeat, completeTask,
 * failTask). Most users want the Worker class, which drives these.
 */
import { MAX_ERROR_LENGTH } from "@tasklane/core/limits";
import { TASK_FIELDS } from "../graphql/fragments.js";
import { cutText, storableText } from "../storable-text.js";
import { checkResult } from "../validate.js";
import type { CallOptions, GraphQLTransport } from "../transport.js";
import type { HeartbeatResult, Lease, LeaseRequest, Task, TaskCompletion, TaskCompletionOutcome } from "../types.js";

const LEASE = `mutation LeaseTasks($queue: String!, $workerId: String!, $max: Int, $leaseSeconds: Int, $waitSeconds: Float, $startAheadMs: Int) {
  leaseTasks(queue: $queue, workerId: $workerId, max: $max, leaseSeconds: $leaseSeconds, waitSeconds: $waitSeconds, startAheadMs: $startAheadMs) {
    task { ...TaskFields } leaseToken leaseExpiresAt startInMs parents
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
   * lease token makes a repeat harmless (a repeat of an accepted call is
   * refused with CONFLICT, never applied twice).
   */
  async complete(taskId: string, leaseToken: string, result?: unknown, opts?: CallOptions): Promise<Task> {
    checkResult("completeTask", result);
    const data = await this.#transport.execute<{ completeTask: Task }>(
      { operation: "completeTask", document: COMPLETE, idempotent: true },
      { taskId, leaseToken, result: result === undefined ? null : result },
      opts,
    );
    return data.completeTask;
  }

  /**
   * completeTask for many leases in one call (at most 500, each task once).
   * Each item is fenced by its own token: a refused one (its `code` is
   * CONFLICT, NOT_FOUND or BAD_USER_INPUT) does not affect the others.
   */
  completeMany(completions: TaskCompletion[], opts?: CallOptions): Promise<TaskCompletionOutcome[]> {
    return this.#completeTasks<TaskCompletionOutcome>(COMPLETE_MANY, completions, opts);
  }

  /**
   * completeMany without the recorded tasks in the answer (each outcome's
   * `task` is absent): the gateway then skips mapping and serialising a full
   * task per item, which is most of such a call's cost.
   */
  settleMany(completions: TaskCompletion[], opts?: CallOptions): Promise<Omit<TaskCompletionOutcome, "task">[]> {
    return this.#completeTasks<Omit<TaskCompletionOutcome, "task">>(SETTLE_MANY, completions, opts);
  }

  /** The completeTasks call behind completeMany and settleMany; `document` chooses what each outcome carries. */
  async #completeTasks<TOutcome>(document: string, completions: TaskCompletion[], opts?: CallOptions): Promise<TOutcome[]> {
    completions.forEach((c, i) => checkResult("completeTasks", c.result, `completions.${i}.result`));
    const data = await this.#transport.execute<{ completeTasks: TOutcome[] }>(
      { operation: "completeTasks", document, idempotent: true },
      { completions: completions.map((c) => ({ taskId: c.taskId, leaseToken: c.leaseToken, result: c.result === undefined ? null : c.result })) },
      opts,
    );
    return data.completeTasks;
  }

  /**
   * Records a failed attempt: RETRYING after the backoff, or DEAD when attempts
   * are exhausted or `retryable` is false. Messages longer than 8,192 characters
   * are cut (never through a surrogate pair), and NUL or unpaired surrogates,
   * which the gateway refuses, become U+FFFD: a message the gateway cannot
   * store must not cost the outcome itself.
   */
  async fail(taskId: string, leaseToken: string, error: string, retryable?: boolean, opts?: CallOptions): Promise<Task> {
    const data = await this.#transport.execute<{ failTask: Task }>(
      { operation: "failTask", document: FAIL, idempotent: true },
      { taskId, leaseToken, error: storableText(cutText(error, MAX_ERROR_LENGTH)), retryable },
      opts,
    );
    return data.failTask;
  }
}
