/**
 * The UserError family: every error a client may see, mapped to the
 * contract's `extensions.code` in one place. Anything that is not a UserError
 * is reported as INTERNAL_SERVER_ERROR without its message.
 */
import { assertNever } from "./assert-never.js";

export const ErrorCode = {
  /** Missing, malformed, revoked or unknown credential. */
  UNAUTHENTICATED: "UNAUTHENTICATED",
  /** Valid credential without the scope/role the operation needs. */
  FORBIDDEN: "FORBIDDEN",
  /** The entity does not exist for this tenant (absent and foreign look the same). */
  NOT_FOUND: "NOT_FOUND",
  /** The input failed validation; `extensions.fieldErrors` says where. */
  BAD_USER_INPUT: "BAD_USER_INPUT",
  /** The entity's current state forbids the operation (e.g. cancelling a terminal task, a stale lease). */
  CONFLICT: "CONFLICT",
  /** The tenant's API rate limit is exhausted; carries retryAfterSeconds, HTTP 429. */
  RATE_LIMITED: "RATE_LIMITED",
  /** A tenant quota (pending tasks, daily submissions) would be exceeded; waiting alone may not help. */
  QUOTA_EXCEEDED: "QUOTA_EXCEEDED",
  /** The platform is shedding load; carries retryAfterSeconds, HTTP 503. */
  OVERLOADED: "OVERLOADED",
  /** A bug or an unavailable dependency; details are logged, never returned. */
  INTERNAL_SERVER_ERROR: "INTERNAL_SERVER_ERROR",
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

export interface FieldError {
  path: string;
  message: string;
}

export class UserError extends Error {
  readonly code: ErrorCode;
  readonly extensions: Record<string, unknown>;

  constructor(
    code: ErrorCode,
    message: string,
    extensions: Record<string, unknown> = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
    this.extensions = extensions;
  }
}

export class UnauthenticatedError extends UserError {
  // Fixed message: saying *why* (unknown vs revoked key) would help key guessing.
  constructor(options?: { cause?: unknown }) {
    super(ErrorCode.UNAUTHENTICATED, "Invalid or missing credentials", {}, options);
  }
}

export class ForbiddenError extends UserError {
  constructor(message = "Not allowed", extensions: Record<string, unknown> = {}) {
    super(ErrorCode.FORBIDDEN, message, extensions);
  }
}

/**
 * Entities the caller addresses by a name of its own (a queue's name, unique
 * only within its tenant). Their NOT_FOUND message repeats the name, so a
 * caller that touches several queues learns which one is missing; it tells
 * nothing the caller did not send, and reads the same whether another tenant
 * has such a queue or not.
 */
const NAMED_BY_CALLER: ReadonlySet<string> = new Set(["Queue"]);

export class NotFoundError extends UserError {
  /**
   * The message names the entity kind, and the name for a caller-named entity
   * (`Queue "emails" not found`), so it is the same whether the id exists for
   * another tenant or not at all. Generated ids stay in extensions.id only.
   */
  constructor(entity: string, id?: string) {
    const named = id !== undefined && NAMED_BY_CALLER.has(entity);
    super(ErrorCode.NOT_FOUND, named ? `${entity} ${JSON.stringify(id)} not found` : `${entity} not found`, id === undefined ? { entity } : { entity, id });
  }
}

export class BadUserInputError extends UserError {
  readonly fieldErrors: readonly FieldError[];

  constructor(message: string, fieldErrors: FieldError[] = []) {
    super(ErrorCode.BAD_USER_INPUT, message, fieldErrors.length > 0 ? { fieldErrors } : {});
    this.fieldErrors = fieldErrors;
  }
}

export class ConflictError extends UserError {
  constructor(message: string, extensions: Record<string, unknown> = {}) {
    super(ErrorCode.CONFLICT, message, extensions);
  }
}

/** Rounded up and at least 1 s, so a client never busy-loops on "retry after 0". */
function wholeSeconds(s: number): number {
  return Number.isFinite(s) ? Math.max(1, Math.ceil(s)) : 1;
}

export class RateLimitedError extends UserError {
  readonly retryAfterSeconds: number;

  constructor(retryAfterSeconds: number) {
    const seconds = wholeSeconds(retryAfterSeconds);
    super(ErrorCode.RATE_LIMITED, "Rate limit exceeded", { retryAfterSeconds: seconds });
    this.retryAfterSeconds = seconds;
  }
}

export class QuotaExceededError extends UserError {
  /** `extensions` says which quota (e.g. { quota: "dailyTaskQuota", limit: 100 }) so clients need not parse the message. */
  constructor(message: string, extensions: Record<string, unknown> = {}) {
    super(ErrorCode.QUOTA_EXCEEDED, message, extensions);
  }
}

export class OverloadedError extends UserError {
  readonly retryAfterSeconds: number;

  constructor(retryAfterSeconds: number) {
    const seconds = wholeSeconds(retryAfterSeconds);
    super(ErrorCode.OVERLOADED, "Service overloaded, try again later", { retryAfterSeconds: seconds });
    this.retryAfterSeconds = seconds;
  }
}

/** A lease token that is no longer current: the task was re-leased, expired or finished. */
export class StaleLeaseError extends ConflictError {
  constructor(message = "Lease is no longer held") {
    super(message, { reason: "STALE_LEASE" });
  }
}

export function isUserError(e: unknown): e is UserError {
  return e instanceof UserError;
}

/** GraphQL reports errors in a 200 body; only throttling changes the HTTP status so proxies and clients back off. */
export function httpStatusForCode(code: ErrorCode): 200 | 429 | 503 {
  switch (code) {
    case ErrorCode.RATE_LIMITED:
      return 429;
    case ErrorCode.OVERLOADED:
      return 503;
    case ErrorCode.UNAUTHENTICATED:
    case ErrorCode.FORBIDDEN:
    case ErrorCode.NOT_FOUND:
    case ErrorCode.BAD_USER_INPUT:
    case ErrorCode.CONFLICT:
    case ErrorCode.QUOTA_EXCEEDED:
    case ErrorCode.INTERNAL_SERVER_ERROR:
      return 200;
    default:
      return assertNever(code);
  }
}
