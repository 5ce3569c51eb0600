/**
 * The GraphQL transport: one POST per attempt, a typed TasklaneError for every
 * failure, and the retry policy of retry.ts (which operations may be repeated
 * after which failures is documented there).
 */
import { randomUUID } from "node:crypto";
import { delay } from "./delay.js";
import { ErrorCode, TasklaneError } from "./errors.js";
import { fetchExchange, undiciExchange, type FetchLike, type HttpExchange } from "./http-exchange.js";
import { interpretResponse, type Interpreted, type RawResponse } from "./graphql/interpret-response.js";
import { withheldTasks } from "./graphql/withheld-bodies.js";
import { resolveRetry, retryDelayMs, shouldRetry, type RetryOptions, type RetryPolicy } from "./retry.js";
import { shownUrl } from "./shown-url.js";

/** What the SDK reads of a task whose bodies a bulk answer withheld. */
const TASK_BODIES = `query TaskBodies($id: ID!) { task(id: $id) { payload result } }`;

export const SDK_VERSION = "0.1.0";

export type { FetchLike } from "./http-exchange.js";

export interface TransportOptions {
  /** The GraphQL endpoint, e.g. `http://127.0.0.1:4000/graphql`. */
  url: string;
  /** A tenant API key (or the operator token for createTenant/updateTenant). */
  apiKey: string;
  /** Sends each request through this fetch instead of undici's `request` (http-exchange.ts). */
  fetch?: FetchLike;
  /**
   * Per attempt, from sending the request to reading the whole response.
   * leaseTasks adds its waitSeconds on top.
   * @defaultValue 30_000
   */
  timeoutMs?: number;
  /** `false` disables retries. @defaultValue `{ attempts: 3 }` */
  retry?: RetryOptions | false;
}

/** Per-call options every resource method accepts last. */
export interface CallOptions {
  /** Aborting rejects the call with code ABORTED (the server may still have executed it). */
  signal?: AbortSignal;
  /** Overrides the client's timeoutMs for each attempt of this call. */
  timeoutMs?: number;
}

/**
 * Filled in by execute() as it goes: whether it tried the call again after a failure that left
 * the outcome unknown, so an earlier attempt may have been executed (a fenced outcome then
 * meets its own effect as CONFLICT: resources/leases.ts).
 */
export interface RetryLog {
  ambiguous: boolean;
}

export interface OperationSpec {
  /** The contract's root field, used in error messages, e.g. "submitTask". */
  operation: string;
  document: string;
  /** Whether repeating the operation after an ambiguous failure can never create a second effect. */
  idempotent: boolean;
}

export class GraphQLTransport {
  readonly url: string;
  readonly timeoutMs: number;
  readonly retry: RetryPolicy;
  readonly #apiKey: string;
  readonly #exchange: HttpExchange;

  constructor(options: TransportOptions) {
    if (typeof options.url !== "string" || !/^https?:\/\//.test(options.url)) {
      throw new TypeError(`url must be an absolute http(s) URL of the GraphQL endpoint, got ${JSON.stringify(typeof options.url === "string" ? shownUrl(options.url) : options.url)}`);
    }
    if (typeof options.apiKey !== "string" || options.apiKey === "") throw new TypeError("apiKey is required");
    const timeoutMs = options.timeoutMs ?? 30_000;
    if (!(timeoutMs > 0)) throw new RangeError(`timeoutMs must be > 0, got ${timeoutMs}`);
    this.url = options.url;
    this.timeoutMs = timeoutMs;
    this.retry = resolveRetry(options.retry);
    this.#apiKey = options.apiKey;
    this.#exchange = options.fetch ? fetchExchange(options.fetch) : undiciExchange();
  }

  /**
   * Runs one operation and returns its `data` object. The caller asserts the
   * shape with TData: the SDK's documents select exactly the fields of its types.
   */
  async execute<TData>(spec: OperationSpec, variables: Record<string, unknown>, call: CallOptions = {}, log?: RetryLog): Promise<TData> {
    const body = serialize(spec, variables);
    const requestId = `tl-${randomUUID()}`;
    for (let attempt = 1; ; attempt++) {
      const outcome = await this.#attempt(spec.operation, body, requestId, call);
      if (outcome.ok) {
        if (outcome.withheld !== undefined) await this.#readWithheldBodies(spec.operation, outcome.data, outcome.withheld, call);
        return outcome.data as TData;
      }
      const { error, kind } = outcome;
      if (attempt >= this.retry.attempts || !shouldRetry(kind, spec.idempotent)) throw error;
      const waitMs = retryDelayMs(attempt, error.retryAfterSeconds, this.retry);
      if (waitMs === null) throw error;
      if (!(await delay(waitMs, call.signal))) throw aborted(spec.operation, call.signal, error);
      if (log !== undefined && kind === "ambiguous") log.ambiguous = true;
    }
  }

  /**
   * Fills in the task bodies a bulk answer withheld, reading each such task
   * alone (its bodies always fit an answer). A path the SDK cannot follow
   * leaves the answer as it is, those fields null.
   */
  async #readWithheldBodies(operation: string, data: Record<string, unknown>, paths: ReadonlyArray<ReadonlyArray<string | number>>, call: CallOptions): Promise<void> {
    const tasks = withheldTasks(data, paths);
    if (tasks === null) throw new TasklaneError("BAD_RESPONSE", `${operation}: the answer withheld task bodies the SDK cannot place`, { operation });
    for (const { taskId, target, fields } of tasks) {
      const { task } = await this.execute<{ task: { payload: unknown; result: unknown } | null }>(
        { operation: "task", document: TASK_BODIES, idempotent: true },
        { id: taskId },
        call,
      );
      // Gone since (retention): its bodies stay null, as the answer had them.
      if (task === null) continue;
      for (const field of fields) target[field] = task[field];
    }
  }

  async #attempt(operation: string, body: string, requestId: string, call: CallOptions): Promise<Interpreted> {
    if (call.signal?.aborted) return { ok: false, error: aborted(operation, call.signal), kind: "final" };
    const timeoutMs = call.timeoutMs ?? this.timeoutMs;
    // One controller and one timer per attempt, cheaper than AbortSignal.timeout
    // plus AbortSignal.any (about 20 µs a request for the PUSH worker's undici calls).
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const onCallerAbort = () => controller.abort(call.signal?.reason);
    call.signal?.addEventListener("abort", onCallerAbort, { once: true });
    let response: RawResponse;
    try {
      response = await this.#exchange(this.url, {
        headers: {
          "content-type": "application/json",
          accept: "application/graphql-response+json, application/json",
          authorization: `Bearer ${this.#apiKey}`,
          "x-request-id": requestId,
          "user-agent": `tasklane-sdk/${SDK_VERSION}`,
        },
        body,
        signal: controller.signal,
      });
    } catch (cause: unknown) {
      if (call.signal?.aborted) return { ok: false, error: aborted(operation, call.signal, cause), kind: "final" };
      if (timedOut) {
        const error = new TasklaneError("TIMEOUT", `${operation}: no response within ${timeoutMs} ms`, { cause, requestId, operation });
        return { ok: false, error, kind: "ambiguous" };
      }
      // A refused connection carried no request: no server logged its id, so there is none to quote to an operator.
      const refused = connectionRefused(cause);
      const error = new TasklaneError("NETWORK_ERROR", `${operation}: request to ${shownUrl(this.url)} failed: ${describe(cause)}`, {
        cause,
        requestId: refused ? undefined : requestId,
        operation,
      });
      return { ok: false, error, kind: refused ? "refused" : "ambiguous" };
    } finally {
      clearTimeout(timer);
      call.signal?.removeEventListener("abort", onCallerAbort);
    }
    return interpretResponse(response, operation, requestId);
  }
}

function serialize(spec: OperationSpec, variables: Record<string, unknown>): string {
  try {
    return JSON.stringify({ query: spec.document, variables });
  } catch (cause: unknown) {
    // BigInt values and cycles: the same refusal the server would give, without a round trip.
    throw new TasklaneError(ErrorCode.BAD_USER_INPUT, `${spec.operation}: variables are not JSON-serialisable: ${describe(cause)}`, {
      cause,
      operation: spec.operation,
    });
  }
}

function aborted(operation: string, signal: AbortSignal | undefined, lastError?: unknown): TasklaneError {
  return new TasklaneError("ABORTED", `${operation}: aborted by the caller`, { cause: signal?.reason ?? lastError, operation });
}

function describe(e: unknown): string {
  if (e instanceof Error) {
    const cause = e.cause instanceof Error ? `: ${e.cause.message}` : "";
    return `${e.message}${cause}`;
  }
  return String(e);
}

function errorCodeOf(e: unknown): unknown {
  return typeof e === "object" && e !== null && "code" in e ? e.code : undefined;
}

/** ECONNREFUSED anywhere in the cause chain (undici wraps it, sometimes in an AggregateError): nothing was sent. */
export function connectionRefused(e: unknown, depth = 0): boolean {
  if (depth > 4 || typeof e !== "object" || e === null) return false;
  if (errorCodeOf(e) === "ECONNREFUSED") return true;
  if (e instanceof AggregateError && e.errors.some((inner: unknown) => connectionRefused(inner, depth + 1))) return true;
  return e instanceof Error && connectionRefused(e.cause, depth + 1);
}
