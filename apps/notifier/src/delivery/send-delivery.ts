import { checkOutboundUrl, parseRetryAfter, signatureHeaders } from "@tasklane/core";
import type { ClaimedDelivery } from "@tasklane/db";
import type { Agent } from "undici";
import { PrivateTargetError, postText } from "@tasklane/outbound";

/** What one POST came to, before any retry decision. */
export type SendResult =
  /** The receiver answered (any status); `bodyCut` says why its body was left unfinished, if it was. */
  | { kind: "response"; status: number; retryAfterSeconds: number | undefined; snippet: string; bodyCut?: string }
  /** Never sent: the target is not allowed (SSRF policy). Retrying would not change that. */
  | { kind: "refused"; reason: string }
  /** No answer: connection error or timeout. */
  | { kind: "error"; error: string };

export interface SendOptions {
  agent: Agent;
  allowPrivate: boolean;
  timeoutMs: number;
  /** W3C traceparent of the delivery span (or the task's stored one): sent so the receiver can join the task's trace. */
  traceParent?: string;
}

/** Response bytes read at most; the rest is discarded. */
export const MAX_RESPONSE_BYTES = 65_536;
/**
 * How long a body may take once the status is in: the status decides the
 * outcome (Standard Webhooks), the body is only read for last_error. A 2xx
 * whose body trickles or is cut off is delivered, not retried.
 */
export const BODY_GRACE_MS = 1_000;
/** Characters of the response kept for last_error. */
const SNIPPET_CHARS = 300;
const USER_AGENT = "Tasklane-Webhooks/0.1";

function privateTargetCause(error: unknown): PrivateTargetError | null {
  if (error instanceof PrivateTargetError) return error;
  if (error instanceof Error && error.cause instanceof PrivateTargetError) return error.cause;
  return null;
}

/**
 * POSTs the stored body, signed per Standard Webhooks. webhook-id is the
 * delivery id (stable across retries, so receivers can deduplicate);
 * webhook-timestamp is this attempt's, as the spec's replay window expects.
 */
export async function sendDelivery(delivery: ClaimedDelivery, options: SendOptions): Promise<SendResult> {
  const check = checkOutboundUrl(delivery.url, { allowPrivate: options.allowPrivate });
  if (!check.ok) return { kind: "refused", reason: `target refused: ${check.reason}` };
  const headers = {
    "content-type": "application/json",
    "user-agent": USER_AGENT,
    ...signatureHeaders(delivery.secrets, delivery.id, Math.floor(Date.now() / 1000), delivery.body),
    ...(options.traceParent !== undefined ? { traceparent: options.traceParent } : {}),
  };
  const timeout = AbortSignal.timeout(options.timeoutMs);
  try {
    // The timeout covers the request and the status; the body gets BODY_GRACE_MS after it, and whatever
    // becomes of the body (slow, cut off, aborted) postText answers with the status.
    const res = await postText(options.agent, check.url, {
      headers,
      body: delivery.body,
      signal: timeout,
      limit: MAX_RESPONSE_BYTES,
      overLimit: "truncate",
      bodyGraceMs: BODY_GRACE_MS,
    });
    const retryAfterHeader = res.headers["retry-after"];
    const retryAfter = parseRetryAfter(Array.isArray(retryAfterHeader) ? retryAfterHeader[0] : retryAfterHeader, Date.now());
    const result: SendResult = { kind: "response", status: res.statusCode, retryAfterSeconds: retryAfter, snippet: res.text.slice(0, SNIPPET_CHARS) };
    if (res.bodyCut !== undefined) result.bodyCut = res.bodyCut;
    return result;
  } catch (error) {
    const refused = privateTargetCause(error);
    if (refused) return { kind: "refused", reason: `target refused: ${refused.message}` };
    if (timeout.aborted) return { kind: "error", error: `timed out after ${options.timeoutMs / 1000} s` };
    const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    return { kind: "error", error: `network error: ${message}` };
  }
}
