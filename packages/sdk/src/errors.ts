/**
 * The errors the SDK throws and the one a handler throws to stop retries.
 * Every failure of a client call is a TasklaneError, so callers need one
 * `instanceof` and one switch over `code`.
 */
import { ErrorCode, type FieldError } from "@tasklane/core/errors";

export { ErrorCode };
export type { FieldError };

/**
 * Failures that never got an answer in the contract's terms, raised by the SDK itself.
 */
export const ClientErrorCode = {
  /** The request could not be sent or its response could not be read (DNS, refused, reset). */
  NETWORK_ERROR: "NETWORK_ERROR",
  /** No response within `timeoutMs`. The server may still have executed the operation. */
  TIMEOUT: "TIMEOUT",
  /** The caller's AbortSignal fired; `cause` is the signal's reason. */
  ABORTED: "ABORTED",
  /** The server answered with something that is not a GraphQL response (wrong URL, a proxy's error page). */
  BAD_RESPONSE: "BAD_RESPONSE",
} as const;
export type ClientErrorCode = (typeof ClientErrorCode)[keyof typeof ClientErrorCode];

/** The contract's `extensions.code` values plus the SDK's own. */
export type TasklaneErrorCode = ErrorCode | ClientErrorCode;

const CONTRACT_CODES: ReadonlySet<unknown> = new Set(Object.values(ErrorCode));

/** Whether a code from an answer is one of the contract's `extensions.code` values. */
export function isContractCode(value: unknown): value is ErrorCode {
  return CONTRACT_CODES.has(value);
}

export interface TasklaneErrorOptions {
  cause?: unknown;
  /** From `extensions.retryAfterSeconds` or the Retry-After header (RATE_LIMITED, OVERLOADED). */
  retryAfterSeconds?: number | undefined;
  /** The gateway's request id (X-Request-Id or `extensions.requestId`); quote it to an operator. */
  requestId?: string | undefined;
  httpStatus?: number | undefined;
  /** The GraphQL error's extensions as received (e.g. `fieldErrors`, `reason`). */
  extensions?: Record<string, unknown> | undefined;
  /** The contract operation that failed, e.g. "submitTask". */
  operation?: string | undefined;
}

export class TasklaneError extends Error {
  readonly code: TasklaneErrorCode;
  readonly retryAfterSeconds: number | undefined;
  readonly requestId: string | undefined;
  readonly httpStatus: number | undefined;
  readonly extensions: Record<string, unknown>;
  readonly operation: string | undefined;

  constructor(code: TasklaneErrorCode, message: string, options: TasklaneErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "TasklaneError";
    this.code = code;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.requestId = options.requestId;
    this.httpStatus = options.httpStatus;
    this.extensions = options.extensions ?? {};
    this.operation = options.operation;
  }

  /** Where BAD_USER_INPUT found problems (`extensions.fieldErrors`); empty for other codes. */
  get fieldErrors(): FieldError[] {
    const raw = this.extensions.fieldErrors;
    if (!Array.isArray(raw)) return [];
    return raw.filter(isFieldError);
  }
}

function isFieldError(value: unknown): value is FieldError {
  return (
    typeof value === "object" &&
    value !== null &&
    "path" in value &&
    typeof value.path === "string" &&
    "message" in value &&
    typeof value.message === "string"
  );
}

/** `e instanceof TasklaneError`, optionally with one of the given codes. */
export function isTasklaneError(e: unknown, ...codes: TasklaneErrorCode[]): e is TasklaneError {
  return e instanceof TasklaneError && (codes.length === 0 || codes.includes(e.code));
}

/**
 * Thrown by a task handler to say "retrying will not help": the Worker reports
 * the failure with `retryable: false`, so the task goes straight to DEAD.
 * Anything else a handler throws is retried per the task's retry policy.
 */
export class NonRetryableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "NonRetryableError";
  }
}

/** Why a handler's `ctx.signal` was aborted. */
export type TaskAbortReason =
  /** cancelTask was called; the heartbeat answered cancelRequested. */
  | "cancelled"
  /** The lease is gone (refused heartbeat, or no successful heartbeat before it ran out); another attempt may be running. */
  | "lease-lost"
  /** Worker.stop() ran out of grace time; nothing will be reported and the lease expires server-side. */
  | "shutdown";

/** The `reason` of an aborted `ctx.signal`. */
export class TaskAbortedError extends Error {
  readonly reason: TaskAbortReason;
  readonly taskId: string;

  constructor(reason: TaskAbortReason, taskId: string, options?: { cause?: unknown }) {
    super(`Task ${taskId} aborted: ${reason}`, options);
    this.name = "TaskAbortedError";
    this.reason = reason;
    this.taskId = taskId;
  }
}
