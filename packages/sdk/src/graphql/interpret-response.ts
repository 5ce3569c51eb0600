/**
 * One HTTP response to either the operation's `data` or a TasklaneError plus
 * what the failure says about retrying. Pure, so the mapping is tested
 * without a server.
 */
import { ErrorCode, TasklaneError, isContractCode, type TasklaneErrorCode } from "../errors.js";
import { failureKindOfCode, parseRetryAfter, type FailureKind } from "../retry.js";
import { withheldBodyPaths } from "./withheld-bodies.js";

export type Interpreted =
  /** `withheld`: paths of task bodies the gateway left out of a bulk answer (withheld-bodies.ts), to read alone. */
  | { ok: true; data: Record<string, unknown>; withheld?: ReadonlyArray<ReadonlyArray<string | number>> }
  | { ok: false; error: TasklaneError; kind: FailureKind };

export interface RawResponse {
  status: number;
  headers: { get(name: string): string | null };
  text: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function finiteNumber(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

function nonEmptyString(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** The code an HTTP status implies when the body carries none. */
function codeOfStatus(status: number): TasklaneErrorCode {
  if (status === 429) return ErrorCode.RATE_LIMITED;
  if (status === 503) return ErrorCode.OVERLOADED;
  if (status >= 500) return ErrorCode.INTERNAL_SERVER_ERROR;
  if (status === 401) return ErrorCode.UNAUTHENTICATED;
  if (status === 403) return ErrorCode.FORBIDDEN;
  return "BAD_RESPONSE";
}

export function interpretResponse(res: RawResponse, operation: string, sentRequestId: string): Interpreted {
  const headerRequestId = nonEmptyString(res.headers.get("x-request-id"));
  const headerRetryAfter = parseRetryAfter(res.headers.get("retry-after"));
  const body = parseJson(res.text);

  if (isRecord(body) && Array.isArray(body.errors) && body.errors.length > 0) {
    const withheld = res.status >= 200 && res.status < 300 && isRecord(body.data) ? withheldBodyPaths(body.errors) : null;
    if (withheld !== null) return { ok: true, data: body.data as Record<string, unknown>, withheld };
    const first: unknown = body.errors[0];
    const message = isRecord(first) && typeof first.message === "string" ? first.message : "Unknown GraphQL error";
    const extensions = isRecord(first) && isRecord(first.extensions) ? first.extensions : {};
    const rawCode = extensions.code;
    const code: TasklaneErrorCode = isContractCode(rawCode) ? rawCode : res.status >= 400 ? codeOfStatus(res.status) : ErrorCode.INTERNAL_SERVER_ERROR;
    const error = new TasklaneError(code, message, {
      retryAfterSeconds: finiteNumber(extensions.retryAfterSeconds) ?? headerRetryAfter,
      requestId: nonEmptyString(extensions.requestId) ?? headerRequestId ?? sentRequestId,
      httpStatus: res.status,
      extensions,
      operation,
    });
    return { ok: false, error, kind: failureKindOfCode(code) };
  }

  if (res.status >= 200 && res.status < 300 && isRecord(body) && isRecord(body.data)) {
    return { ok: true, data: body.data };
  }

  // Not a GraphQL answer: a proxy, a load balancer or the wrong URL spoke.
  const code = res.status >= 200 && res.status < 300 ? "BAD_RESPONSE" : codeOfStatus(res.status);
  const error = new TasklaneError(code, `${operation}: unexpected HTTP ${res.status} response without GraphQL errors`, {
    retryAfterSeconds: headerRetryAfter,
    requestId: headerRequestId ?? sentRequestId,
    httpStatus: res.status,
    operation,
  });
  // Only a 429 proves nothing ran; a bare 5xx from an intermediary may follow a request the gateway did execute.
  const kind: FailureKind = res.status === 429 ? "refused" : res.status >= 500 ? "ambiguous" : "final";
  return { ok: false, error, kind };
}
