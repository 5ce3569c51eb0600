/**
 * Live updates: the API's graphql-ws subscriptions (taskUpdated,
 * workflowUpdated) as async iterators.
 *
 * ```ts
 * for await (const event of client.live.taskUpdates({ taskId })) {
 *   console.log(event.previousStatus, "->", event.status);
 *   if (event.status === "SUCCEEDED") break; // unsubscribes and closes the socket
 * }
 * ```
 *
 * Each iterator has a socket of its own, opened on the first `next()` and
 * closed when the loop ends (`break`, `return`, a thrown error, the signal).
 *
 * A lost socket loses no task event: `taskUpdates` subscribes again after
 * the last event it received (`taskUpdated(after:)`, README "Subscriptions"),
 * so the gateway first sends what happened meanwhile, in order, then live
 * events. Pass `after` (a `TaskEvent.id` kept from an earlier run) to resume
 * across processes too. What it cannot resume: a feed more than 200,000 events
 * behind (BAD_USER_INPUT, reason RESUME_TOO_FAR; one task's feed has no such
 * bound), events before the first one a fresh iterator received (graphql-ws
 * acknowledges the connection, never the subscribe, so there is no moment
 * from which a new subscription is known to listen: read the current state
 * once it is open, as `tasks.waitUntilFinished` does), and `workflowUpdates`,
 * which sends state, not events: after a reconnect it sends the workflow on
 * its next change (read it with `workflows.get` to catch up).
 */
import { createClient } from "graphql-ws";
import type { TaskStatus } from "@tasklane/core/statuses";
import { ErrorCode, TasklaneError, isContractCode } from "./errors.js";
import { TASK_FIELDS, WORKFLOW_FIELDS } from "./graphql/fragments.js";
import type { Task, Workflow } from "./types.js";
import { shownUrl } from "./shown-url.js";

/** One status change of a task, as `taskUpdated` sends it. */
export interface TaskEvent {
  /** The event's id (the audit trail's `TaskAuditEvent.id`), ascending along a feed: where to resume it (`after`). */
  id: string;
  taskId: string;
  previousStatus: TaskStatus | null;
  status: TaskStatus;
  /** When the change happened (ISO 8601). */
  at: string;
  /** The task as it is when the event is sent: it may already be past `status`. */
  task: Task;
}

export interface LiveOptions {
  /** The graphql-ws endpoint. @defaultValue the client's `url` with http(s) turned into ws(s) */
  webSocketUrl?: string;
  /**
   * The WebSocket class graphql-ws opens sockets with. The default is the `ws` package's on every Node
   * version (Node 20 has no global WebSocket; one implementation behaves the same on 20 and 22), imported
   * on the first socket only, so a process that never opens one never loads it. Node 22's global:
   * `webSocketImpl: WebSocket`.
   * @defaultValue the `ws` package's
   */
  webSocketImpl?: unknown;
  /**
   * How many times a lost socket is made again (graphql-ws's retryAttempts, backing off
   * randomly from 1 s); a socket the gateway closed for a bad key (4401) is never retried.
   * @defaultValue 5
   */
  liveRetryAttempts?: number;
  /**
   * How often an iterator's socket is pinged (graphql-ws's keepAlive). A pong missing for
   * `livePongTimeoutMs` means the connection is dead without having closed (a network that lost it
   * with no reset: a failover, a NAT's expiry): the socket is dropped and made again, as a lost one.
   * Without it, a loop on such a connection would wait forever. 0: no pings.
   * @defaultValue 15_000
   */
  liveKeepAliveMs?: number;
  /**
   * How long a ping waits for its pong, and (with the default `ws` WebSocket) how long opening a
   * socket may take before it is given up and tried again. 0: no limit on either.
   * @defaultValue 10_000
   */
  livePongTimeoutMs?: number;
  /**
   * How many received events one `taskUpdates` iterator holds while its loop has not taken them (a busy queue's
   * `taskUpdates({ queue })` may send thousands a second). One more ends the iterator: `next()` rejects
   * with code OVERLOADED (`extensions.reason` "LIVE_BUFFER_FULL") and the socket closes at once, as
   * the gateway closes a socket its reader leaves behind (1013, also OVERLOADED). No event is dropped
   * silently: subscribe anew with `after` (the last event taken). (`workflowUpdates` holds only the newest workflow.)
   * @defaultValue 10_000
   */
  liveBufferSize?: number;
}

export interface LiveStreamOptions {
  /** Aborting ends the loop: `next()` rejects with code ABORTED and the socket closes. */
  signal?: AbortSignal;
  /**
   * Called each time the gateway accepts the socket: `reconnected` is true when it was made again
   * after it was lost. `taskUpdates` then resumes after its last event; for `workflowUpdates`,
   * changes in between are gone (read the state again).
   */
  onConnected?(reconnected: boolean): void;
}

export interface TaskUpdatesFilter {
  /** Only this task's events (another tenant's or an unknown id: NOT_FOUND from the first `next()`). */
  taskId?: string | null;
  /** Only this queue's tasks (an unknown name: NOT_FOUND). */
  queue?: string | null;
  /**
   * Resume after this event (a `TaskEvent.id`): the feed's events after it come first, read back
   * by the gateway, then live ones. Without it the feed starts when the gateway begins listening.
   */
  after?: string | null;
}

/** LiveOptions' defaults (documented there). */
const DEFAULT_LIVE_RETRY_ATTEMPTS = 5;
const DEFAULT_LIVE_BUFFER_SIZE = 10_000;
const DEFAULT_LIVE_KEEP_ALIVE_MS = 15_000;
const DEFAULT_LIVE_PONG_TIMEOUT_MS = 10_000;

const TASK_UPDATED = `subscription TaskUpdated($taskId: ID, $queue: String, $after: ID) {
  taskUpdated(taskId: $taskId, queue: $queue, after: $after) { id taskId previousStatus status at task { ...TaskFields } }
}
${TASK_FIELDS}`;
const WORKFLOW_UPDATED = `subscription WorkflowUpdated($workflowId: ID!) { workflowUpdated(workflowId: $workflowId) { ...WorkflowFields } }
${WORKFLOW_FIELDS}`;

/** Close codes the gateway (graphql/ws.ts, realtime/socket-output-limit.ts) ends a socket with, as the SDK's codes. */
const CLOSE_CODES: Readonly<Record<number, ErrorCode>> = {
  4401: ErrorCode.UNAUTHENTICATED,
  4429: ErrorCode.RATE_LIMITED,
  1013: ErrorCode.OVERLOADED,
};

export class LiveResource {
  readonly #url: string;
  readonly #apiKey: string;
  readonly #options: LiveOptions;
  /** Without a webSocketImpl: `ws`'s WebSocket with a handshake timeout, made on the first socket. */
  #defaultWebSocket: Promise<unknown> | null = null;

  constructor(graphqlUrl: string, apiKey: string, options: LiveOptions = {}) {
    this.#url = options.webSocketUrl ?? webSocketUrlOf(graphqlUrl);
    this.#apiKey = apiKey;
    this.#options = options;
  }

  /** The graphql-ws endpoint the iterators connect to. */
  get url(): string {
    return this.#url;
  }

  /** Every status change of the tenant's tasks, narrowed by `filter`, in the order they happened. It never ends on its own. */
  taskUpdates(filter: TaskUpdatesFilter = {}, options: LiveStreamOptions = {}): AsyncGenerator<TaskEvent, void, undefined> {
    const variables: Record<string, unknown> = { taskId: filter.taskId ?? null, queue: filter.queue ?? null, after: filter.after ?? null };
    // graphql-ws subscribes again after a reconnect with this same payload object, read when it is sent: after the last event received.
    return this.#stream<TaskEvent>("taskUpdated", TASK_UPDATED, variables, options, "every", (event) => (variables.after = event.id));
  }

  /**
   * The workflow each time one of its tasks changes status. Each is the whole workflow, superseding the
   * ones before it: a loop that falls behind gets the newest (on the gateway too, a backlog collapses
   * into the newest), never a pile of stale snapshots nor LIVE_BUFFER_FULL. It never ends on its own.
   */
  workflowUpdates(workflowId: string, options: LiveStreamOptions = {}): AsyncGenerator<Workflow, void, undefined> {
    return this.#stream<Workflow>("workflowUpdated", WORKFLOW_UPDATED, { workflowId }, options, "newest");
  }

  /**
   * `keep`: "every" value in order (events, each a change), or only the "newest" waiting (snapshots, each superseding the
   * last). `received` sees each value as it arrives, before the loop takes it.
   */
  async *#stream<T>(
    operation: string,
    query: string,
    variables: Record<string, unknown>,
    options: LiveStreamOptions,
    keep: "every" | "newest",
    received?: (value: T) => void,
  ): AsyncGenerator<T, void, undefined> {
    const retryAttempts = this.#options.liveRetryAttempts ?? DEFAULT_LIVE_RETRY_ATTEMPTS;
    const bufferSize = this.#options.liveBufferSize ?? DEFAULT_LIVE_BUFFER_SIZE;
    const inbox = new Inbox<T>(keep, bufferSize, () =>
      new TasklaneError(ErrorCode.OVERLOADED, `${operation}: more than ${bufferSize} events waiting for the loop to take them (liveBufferSize)`, {
        extensions: { reason: "LIVE_BUFFER_FULL" },
        operation,
      }),
    );
    let closing: Promise<void> | null = null;
    let stopSocket: (() => Promise<void>) | null = null;
    // The socket closes as soon as the stream has ended (abort, full buffer), not at the loop's next next(): a loop paused elsewhere may take long to come back.
    const stop = (): Promise<void> => (closing ??= stopSocket?.() ?? Promise.resolve());
    const onAbort = () => {
      inbox.fail(new TasklaneError("ABORTED", `${operation}: aborted by the caller`, { cause: options.signal?.reason, operation }));
      void stop();
    };
    options.signal?.addEventListener("abort", onAbort, { once: true });
    try {
      if (options.signal?.aborted) onAbort();
      const pongTimeoutMs = this.#options.livePongTimeoutMs ?? DEFAULT_LIVE_PONG_TIMEOUT_MS;
      const webSocketImpl = this.#options.webSocketImpl ?? (await (this.#defaultWebSocket ??= wsWithHandshakeTimeout(pongTimeoutMs)));
      if (closing === null) {
        let retriesSinceConnected = 0;
        const pong = new PongDeadline(pongTimeoutMs, () => client.terminate());
        const client = createClient({
          url: this.#url,
          webSocketImpl,
          connectionParams: { authorization: `Bearer ${this.#apiKey}` },
          retryAttempts,
          // graphql-ws retries only a closed socket by default; a refused or reset one (ws's error event: the gateway
          // restarting, down) would end the iterator at once. The close codes it never retries (4401 above all) still end it.
          // A socket terminated for a missing pong (4499) is retried too.
          shouldRetry: () => true,
          lazy: true,
          keepAlive: this.#options.liveKeepAliveMs ?? DEFAULT_LIVE_KEEP_ALIVE_MS,
          on: {
            connecting: (isRetry) => {
              pong.cancel();
              if (isRetry) retriesSinceConnected++;
            },
            connected: (_socket, _payload, wasRetry) => {
              retriesSinceConnected = 0;
              options.onConnected?.(wasRetry);
            },
            ping: (received) => void (received || pong.expect()),
            pong: (received) => void (received && pong.cancel()),
            closed: () => pong.cancel(),
          },
        });
        const unsubscribe = client.subscribe<Record<string, T>>(
          { query, variables, operationName: operation.charAt(0).toUpperCase() + operation.slice(1) },
          {
            next: (result) => {
              if (result.errors?.length) inbox.fail(errorOfGraphQL(result.errors, operation));
              else if (result.data?.[operation] !== undefined) {
                const value = result.data[operation] as T;
                received?.(value);
                if (!inbox.push(value)) void stop();
              }
            },
            error: (error: unknown) => inbox.fail(errorOfTransport(error, operation, shownUrl(this.#url), retriesSinceConnected)),
            complete: () => inbox.end(),
          },
        );
        stopSocket = async () => {
          unsubscribe();
          // dispose() waits for a socket still being made (bounded by the handshake and pong timeouts) and rejects
          // when it never was: nothing is left to close then, and the rejection must not become the stream's error
          // or, from an abort's stop(), an unhandled one.
          await Promise.resolve(client.dispose()).catch(() => undefined);
        };
      }
      for (;;) {
        const item = await inbox.take();
        if (item.done) return;
        yield item.value;
      }
    } finally {
      options.signal?.removeEventListener("abort", onAbort);
      await stop();
    }
  }
}

/**
 * The `ws` package's WebSocket, giving up on a socket whose opening handshake takes longer than
 * `timeoutMs` (a server that accepts the connection and never answers the upgrade): graphql-ws
 * constructs sockets with (url, protocol) only, and `ws` waits forever by default.
 */
async function wsWithHandshakeTimeout(timeoutMs: number): Promise<unknown> {
  const WebSocket = (await import("ws")).default;
  return class extends WebSocket {
    constructor(address: string, protocols?: string | string[]) {
      super(address, protocols, { handshakeTimeout: timeoutMs });
    }
  };
}

/** The pong a sent ping waits for; `onMissing` when it has not come within `timeoutMs` (0: it may take any time). */
class PongDeadline {
  #timer: NodeJS.Timeout | undefined;
  #answered = true;

  constructor(
    readonly timeoutMs: number,
    readonly onMissing: () => void,
  ) {}

  expect(): void {
    this.cancel();
    if (this.timeoutMs <= 0) return;
    this.#answered = false;
    this.#timer = setTimeout(() => {
      // Judged after the event loop's pending I/O: a loop the caller kept busy past the deadline fires this
      // timer before reading the pong that has been waiting on the socket meanwhile.
      setImmediate(() => {
        if (!this.#answered) this.onMissing();
      });
    }, this.timeoutMs);
    this.#timer.unref?.();
  }

  cancel(): void {
    this.#answered = true;
    clearTimeout(this.#timer);
  }
}

/** http://host/graphql -> ws://host/graphql, https -> wss. */
export function webSocketUrlOf(graphqlUrl: string): string {
  return graphqlUrl.replace(/^http(s?):\/\//i, (_m, s: string) => `ws${s.toLowerCase()}://`);
}

/** Values and the end of one subscription, handed to the loop one at a time. */
class Inbox<T> {
  readonly #values: T[] = [];
  #end: { error: unknown } | null = null;
  #wake: (() => void) | null = null;

  /**
   * `keep` "every": `overflow` is the error the inbox ends with when a value arrives while `capacity`
   * wait. "newest": a value takes the place of the one waiting, so nothing overflows.
   */
  constructor(
    readonly keep: "every" | "newest",
    readonly capacity: number,
    readonly overflow: () => unknown,
  ) {}

  /** False when the value did not fit and the inbox has ended with the overflow error. */
  push(value: T): boolean {
    if (this.#end !== null) return true;
    if (this.keep === "newest") this.#values.length = 0;
    else if (this.#values.length >= this.capacity) {
      this.fail(this.overflow());
      return false;
    }
    this.#values.push(value);
    this.#notify();
    return true;
  }

  /** Ends with `error` after what was received; the first end stands. */
  fail(error: unknown): void {
    if (this.#end === null) this.#end = { error };
    this.#notify();
  }

  end(): void {
    this.fail(undefined);
  }

  async take(): Promise<IteratorResult<T, undefined>> {
    for (;;) {
      // An error (an abort above all) wins over values still waiting; a plain end lets them out first.
      if (this.#end !== null && this.#end.error !== undefined) throw this.#end.error;
      if (this.#values.length > 0) return { done: false, value: this.#values.shift() as T };
      if (this.#end !== null) return { done: true, value: undefined };
      await new Promise<void>((resolve) => (this.#wake = resolve));
    }
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = null;
    wake?.();
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The first GraphQL error of a subscription as the TasklaneError an HTTP call would have thrown. */
function errorOfGraphQL(errors: readonly unknown[], operation: string): TasklaneError {
  const first = errors[0];
  const extensions = isRecord(first) && isRecord(first.extensions) ? first.extensions : {};
  const message = isRecord(first) && typeof first.message === "string" ? first.message : "Unknown GraphQL error";
  const code = isContractCode(extensions.code) ? extensions.code : ErrorCode.INTERNAL_SERVER_ERROR;
  return new TasklaneError(code, message, {
    retryAfterSeconds: typeof extensions.retryAfterSeconds === "number" ? extensions.retryAfterSeconds : undefined,
    requestId: typeof extensions.requestId === "string" ? extensions.requestId : undefined,
    extensions,
    operation,
  });
}

/** graphql-ws's `error`: GraphQL errors of an `error` message, a CloseEvent once retries are spent, or an Error. */
function errorOfTransport(error: unknown, operation: string, url: string, retries: number): TasklaneError {
  if (Array.isArray(error)) return errorOfGraphQL(error, operation);
  const retried = retries > 0 ? `, given up after ${retries} reconnect attempt${retries === 1 ? "" : "s"}` : "";
  if (isRecord(error) && typeof error.code === "number") {
    const reason = typeof error.reason === "string" && error.reason !== "" ? error.reason : "no reason given";
    const code = CLOSE_CODES[error.code] ?? "NETWORK_ERROR";
    return new TasklaneError(code, `${operation}: the socket to ${url} closed (${error.code} ${reason})${retried}`, { cause: error, operation });
  }
  return new TasklaneError("NETWORK_ERROR", `${operation}: ${url}: ${messageOf(error)}${retried}`, { cause: error, operation });
}

/** An Error's message, or a WebSocket ErrorEvent's (ws: `message`, with the Error as `error`), never "[object Object]". */
function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (isRecord(error) && error.error instanceof Error) return error.error.message;
  if (isRecord(error) && typeof error.message === "string" && error.message !== "") return error.message;
  return "the socket failed";
}
