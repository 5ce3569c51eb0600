/**
 * The one place errors become what a client sees. Every error leaves with an
 * `extensions.code` from the contract:
 * - a core UserError keeps its message, code and extensions;
 * - a request the server could not even run (parse, validation, variable
 *   coercion, malformed HTTP body) is BAD_USER_INPUT;
 * - a store that cannot be reached (Postgres restarting) is OVERLOADED with
 *   retryAfterSeconds: nothing committed, retrying later is the fix;
 * - anything else is INTERNAL_SERVER_ERROR "Internal server error" with the
 *   requestId; the real error is logged, never returned (no stack, no SQL).
 */
import { HeaderMap } from "@apollo/server";
import { ErrorCode, httpStatusForCode, isUserError, type UserError } from "@tasklane/core";
import { GraphQLError, type GraphQLFormattedError } from "graphql";
import type { Logger } from "../observability/logger.js";
import { errorScopeTaggedOn, type RequestScope } from "../observability/request-scope.js";
import { isStoreUnavailable, storeUnavailableError } from "./store-unavailable.js";

/** Apollo's codes for a request that never reached execution. */
const CLIENT_REQUEST_CODES: ReadonlySet<unknown> = new Set([
  "GRAPHQL_PARSE_FAILED",
  "GRAPHQL_VALIDATION_FAILED",
  "BAD_USER_INPUT",
  "BAD_REQUEST",
  "OPERATION_RESOLUTION_FAILURE",
  "PERSISTED_QUERY_NOT_FOUND",
  "PERSISTED_QUERY_NOT_SUPPORTED",
]);

export const INTERNAL_MESSAGE = "Internal server error";

const SUGGESTION = /\s*Did you mean .*\?$/;

export interface ErrorFormatOptions {
  /** Strip "Did you mean …?" so the schema cannot be discovered by guessing (production). */
  hideSuggestions: boolean;
  /** Used when no request scope is active (e.g. a WebSocket message). */
  fallbackLog: Logger;
}

/**
 * For errors raised outside resolvers (plugins, context creation): the status
 * travels in `extensions.http`, which Apollo strips; throttling errors also
 * carry their Retry-After header there, because a request refused while its
 * context is created never reaches the plugins that would add it.
 */
export function toGraphQLError(error: UserError): GraphQLError {
  const retryAfter = error.extensions.retryAfterSeconds;
  const headers = new HeaderMap();
  if (typeof retryAfter === "number" && Number.isFinite(retryAfter)) headers.set("retry-after", String(Math.max(1, Math.ceil(retryAfter))));
  return new GraphQLError(error.message, {
    originalError: error,
    extensions: { ...error.extensions, code: error.code, http: { status: httpStatusForCode(error.code), headers } },
  });
}

/** A request-level refusal in the GraphQL error shape (HTTP middleware, before Apollo runs). */
export function requestErrorBody(message: string): { errors: GraphQLFormattedError[] } {
  return { errors: [{ message, extensions: { code: ErrorCode.BAD_USER_INPUT } }] };
}

/** `error` and the errors graphql or Apollo wrapped it around, outermost first (a few levels at most). */
function* wrappedErrors(error: unknown): Generator<unknown> {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current !== undefined; depth++) {
    yield current;
    current = current instanceof GraphQLError ? current.originalError : undefined;
  }
}

/**
 * The UserError behind a GraphQLError, however deeply graphql or Apollo wrapped
 * it (resolver errors carry a path; errors from plugins and scalars do not).
 */
function userErrorBehind(error: unknown): UserError | undefined {
  for (const e of wrappedErrors(error)) if (isUserError(e)) return e;
  return undefined;
}

/** The request an error was raised for (tagged on it, or on an error it wraps: Apollo wraps context failures). */
function requestScopeOf(error: unknown): RequestScope | undefined {
  for (const e of wrappedErrors(error)) {
    const scope = errorScopeTaggedOn(e);
    if (scope !== undefined) return scope;
  }
  return undefined;
}

/** What to log for an internal error: the innermost non-GraphQL error when there is one. */
function rootCause(error: unknown): unknown {
  let current: unknown = error;
  while (current instanceof GraphQLError && current.originalError !== undefined) current = current.originalError;
  return current;
}

export function formatError(
  formatted: GraphQLFormattedError,
  error: unknown,
  opts: ErrorFormatOptions,
  scope: RequestScope | undefined = requestScopeOf(error),
): GraphQLFormattedError {
  const userError = userErrorBehind(error);
  const where = { ...(formatted.locations ? { locations: formatted.locations } : {}), ...(formatted.path ? { path: formatted.path } : {}) };
  if (userError !== undefined) {
    // formatted.message, not userError.message: graphql may have prefixed context ("Variable $x got invalid value …").
    return { message: clean(formatted.message, opts), ...where, extensions: { ...userError.extensions, code: userError.code } };
  }
  const code = formatted.extensions?.code;
  if (CLIENT_REQUEST_CODES.has(code)) {
    return { message: clean(formatted.message, opts), ...where, extensions: { code: ErrorCode.BAD_USER_INPUT } };
  }
  const requestId = scope?.requestId ?? "unknown";
  // A scope's logger is a child carrying requestId already: adding it again wrote the key twice in one line.
  const log = scope?.log ?? opts.fallbackLog.child({ requestId });
  const tenant = scope?.tenantId === undefined ? {} : { tenantId: scope.tenantId };
  if (isStoreUnavailable(error)) {
    // Postgres (or a connection to it) is down: nothing committed, and retrying later is the right move.
    log.warn({ err: rootCause(error), path: formatted.path, ...tenant }, "store unavailable during GraphQL request");
    const overloaded = storeUnavailableError();
    return { message: overloaded.message, ...where, extensions: { ...overloaded.extensions, code: overloaded.code, requestId } };
  }
  log.error({ err: rootCause(error), path: formatted.path, ...tenant }, "unhandled error in GraphQL request");
  return { message: INTERNAL_MESSAGE, ...where, extensions: { code: ErrorCode.INTERNAL_SERVER_ERROR, requestId } };
}

function clean(message: string, opts: ErrorFormatOptions): string {
  return opts.hideSuggestions ? message.replace(SUGGESTION, "") : message;
}
