import { MAX_JSON_DEPTH, MAX_RESULT_BYTES, buildPushBody, checkOutboundUrl, classifyHttpStatus, jsonDepth, parseRetryAfter, signatureHeaders } from "@tasklane/core";
import type { Agent } from "undici";
import { hasUnpairedSurrogate } from "@tasklane/db/pg-text";
import { PrivateTargetError, postText } from "@tasklane/outbound";
import { WORKER_STOPPING, type AttemptAbort } from "./attempt-abort.js";
import { interimAnswerStatus } from "./interim-answer.js";

export interface PushTarget {
  taskId: string;
  type: string;
  payload: unknown;
  attempt: number;
  /**
   * The attempt's lease generation: it names the request (`webhook-id`). It only grows, where attempt
   * numbers start again at 1 after a redrive, and receivers deduplicate on `webhook-id`.
   */
  leaseGeneration: number;
  /** Workflow tasks: each parent's result by workflow key, sent as the body's `parents`. */
  parents?: Record<string, unknown>;
  endpointUrl: string;
  timeoutSeconds: number;
  /** Current tenant secret first; the previous one too while a rotation is in its grace period. */
  signingSecrets: string[];
  /** W3C traceparent for the endpoint: the attempt span, or the task's stored trace context. */
  traceParent?: string;
}

export type PushOutcome =
  /** `note`: the answer is not kept (result null), and why; for the attempt's error and the event's reason. */
  | { kind: "succeeded"; result: unknown; status: number; note?: string }
  | { kind: "failed"; retryable: boolean; timedOut: boolean; error: string; retryAfterSeconds?: number; status?: number }
  /** Cancelled: the cancel transition recorded the task's state. */
  | { kind: "aborted" }
  /** Cut off by the worker stopping (WORKER_STOPPING), before or during the request: not the endpoint's doing. */
  | { kind: "interrupted" };

/**
 * A surrogate escape (`\ud800`-`\udfff`, either case) in an answer's text:
 * decoded from UTF-8, an answer can carry an unpaired surrogate only this way.
 * Rare, and one scan of text JSON.parse has just read; the exact test follows only when it matches.
 */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/**
 * A 2xx body is the result: JSON when it parses and Postgres can store it as
 * jsonb, else the text itself, null when empty. JSON it cannot store is kept
 * as text, as the endpoint wrote it: the endpoint did the work. Such JSON is
 * nested deeper than a payload may be (a value thousands deep overflowed the
 * stack where the worker records outcomes) or holds an unpaired surrogate
 * (`"\ud800"`, which jsonb refuses); either failed the worker's whole
 * completion batch, so every task in it, other tenants' too, ran again after its lease.
 */
function parseResult(text: string): unknown {
  if (text.trim() === "") return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text) as unknown;
  } catch {
    return text;
  }
  if (jsonDepth(parsed, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) return text;
  if (SURROGATE_ESCAPE.test(text) && hasUnpairedSurrogate(JSON.stringify(parsed))) return text;
  return parsed;
}

/**
 * A 2xx whose body is over the result limit: the endpoint did the work, so
 * the attempt succeeded (failing it sent the task to DEAD, and a redrive did
 * the work again); only the answer is not kept.
 */
function oversizedSuccess(status: number): PushOutcome {
  return { kind: "succeeded", result: null, status, note: `Result not kept: the answer exceeds ${MAX_RESULT_BYTES} bytes (HTTP ${status})` };
}

function abortedOutcome(abort: AttemptAbort): PushOutcome {
  return abort.reason === WORKER_STOPPING ? { kind: "interrupted" } : { kind: "aborted" };
}

/** The abort reason of an attempt that ran out of time (any other abort is a cancellation). */
const TIMED_OUT = Symbol("timed out");

/**
 * POSTs one attempt to the queue's endpoint, signed per Standard Webhooks.
 * The outcome classification is the contract's, by status whatever the
 * body's size: 2xx success (over the result limit, without its result);
 * 408/429/5xx, timeouts and network errors retryable (Retry-After honoured);
 * other 4xx, redirects and a 1xx that ends the request (101) permanent. A
 * failure's error quotes the start of its body. `abort` is the attempt's own:
 * the task's cancellation aborts it, and so does its timeout, armed here. One timer per request:
 * `AbortSignal.timeout` plus `AbortSignal.any` cost ~30 µs of CPU per
 * request (a local no-op endpoint, undici), over half again the request itself.
 */
export async function executePush(target: PushTarget, agent: Agent, allowPrivate: boolean, abort: AttemptAbort): Promise<PushOutcome> {
  const check = checkOutboundUrl(target.endpointUrl, { allowPrivate });
  if (!check.ok) return { kind: "failed", retryable: false, timedOut: false, error: `Endpoint refused: ${check.reason}` };
  const body = buildPushBody({
    taskId: target.taskId,
    type: target.type,
    payload: target.payload,
    attempt: target.attempt,
    ...(target.parents !== undefined ? { parents: target.parents } : {}),
  });
  const timestamp = Math.floor(Date.now() / 1000);
  const headers = {
    "content-type": "application/json",
    "user-agent": "Tasklane/0.1",
    "idempotency-key": target.taskId,
    ...signatureHeaders(target.signingSecrets, `${target.taskId}_${target.leaseGeneration}`, timestamp, body),
    ...(target.traceParent !== undefined ? { traceparent: target.traceParent } : {}),
  };
  if (abort.aborted) return abortedOutcome(abort);
  const timer = setTimeout(() => abort.abort(TIMED_OUT), target.timeoutSeconds * 1000);
  try {
    // Over the limit, the body is cut short whatever the status: the status decides the outcome, not the size.
    const res = await postText(agent, check.url, { headers, body, signal: abort, limit: MAX_RESULT_BYTES, overLimit: "truncate" });
    const kind = classifyHttpStatus(res.statusCode);
    if (kind === "success") return res.truncated ? oversizedSuccess(res.statusCode) : { kind: "succeeded", result: parseResult(res.text), status: res.statusCode };
    const retryAfter = parseRetryAfter(res.headers["retry-after"] as string | undefined, Date.now());
    return {
      kind: "failed",
      retryable: kind === "retryable",
      timedOut: false,
      status: res.statusCode,
      error: `HTTP ${res.statusCode}${res.text ? `: ${res.text.slice(0, 500)}` : ""}`,
      ...(retryAfter !== undefined ? { retryAfterSeconds: retryAfter } : {}),
    };
  } catch (error) {
    if (abort.reason === TIMED_OUT) return { kind: "failed", retryable: true, timedOut: true, error: `Timed out after ${target.timeoutSeconds} s` };
    if (abort.aborted) return abortedOutcome(abort);
    const cause = error instanceof Error && error.cause instanceof PrivateTargetError ? error.cause : error;
    if (cause instanceof PrivateTargetError) return { kind: "failed", retryable: false, timedOut: false, error: cause.message };
    const interim = interimAnswerStatus(error);
    if (interim !== undefined) {
      // Judged like any status: 1xx is not in the contract's success or retry lists, so permanent, like a redirect.
      const retryable = classifyHttpStatus(interim) === "retryable";
      return { kind: "failed", retryable, timedOut: false, status: interim, error: `Endpoint answered ${interim}, not a final status` };
    }
    const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    return { kind: "failed", retryable: true, timedOut: false, error: `Network error: ${message}` };
  } finally {
    clearTimeout(timer);
  }
}
