/**
 * @tasklane/sdk — the tenant's client for the Tasklane GraphQL API and a pull
 * Worker. See README.md for the delivery semantics.
 */
export { TasklaneClient, type TasklaneClientOptions, type RawRequestOptions } from "./client.js";
export { Worker, type WorkerOptions, type WorkerConnection, type WorkerSettings, type WorkerState, type StopOptions } from "./worker.js";
export type { TaskContext, TaskHandler, WorkerErrorContext } from "./worker-run.js";
export {
  ClientErrorCode,
  ErrorCode,
  NonRetryableError,
  TaskAbortedError,
  TasklaneError,
  isTasklaneError,
  type FieldError,
  type TaskAbortReason,
  type TasklaneErrorCode,
  type TasklaneErrorOptions,
} from "./errors.js";
export { GraphQLTransport, SDK_VERSION, type CallOptions, type FetchLike, type OperationSpec, type TransportOptions } from "./transport.js";
export { DEFAULT_RETRY, type RetryOptions, type RetryPolicy } from "./retry.js";
export { TasksResource, type AllDeadLettersOptions, type DeadLetterBatch, type DeadLetterBatchOptions, type DeadLetterOptions, type WaitForOptions } from "./resources/tasks.js";
export { QueuesResource } from "./resources/queues.js";
export { LeasesResource, type OutcomeCallOptions } from "./resources/leases.js";
export { SchedulesResource } from "./resources/schedules.js";
export { WorkflowsResource } from "./resources/workflows.js";
export { WebhooksResource } from "./resources/webhooks.js";
export { OperatorResource, TenantResource } from "./resources/tenant.js";
export { LiveResource, webSocketUrlOf, type LiveOptions, type LiveStreamOptions, type TaskEvent, type TaskUpdatesFilter } from "./live.js";
export { followTask, type FollowTaskDeps, type FollowTaskOptions, type WaitUntilFinishedOptions } from "./follow-task.js";
export { isOmittedParentResult, type OmittedParentResult } from "./parent-results.js";
export { DEFAULT_LEASE_AHEAD_MS, DEFAULT_START_AHEAD_MS } from "@tasklane/core/limits";
export { BackoffStrategy, MisfirePolicy, OverlapPolicy, Priority, QueueMode, TaskStatus, WorkflowStatus } from "@tasklane/core/statuses";
export type * from "./types.js";
