/**
 * One leased task inside a Worker: heartbeats while the handler runs, turns
 * the handler's return or throw into completeTask / failTask, and aborts the
 * handler's signal when the task is cancelled, the lease is lost or the
 * worker shuts down hard.
 */
import type { ServerClock } from "@tasklane/core/server-clock";
import type { TasklaneClient } from "./client.js";
import type { CompletionBatcher } from "./completion-batcher.js";
import type { FailureReporter } from "./failure-reporter.js";
import { ErrorCode, NonRetryableError, TaskAbortedError, isTasklaneError, type TaskAbortReason } from "./errors.js";
import { delay } from "./delay.js";
import type { Lease, Task } from "./types.js";

export interface TaskContext {
  /**
   * Aborted when the task is cancelled (a heartbeat answered cancelRequested),
   * when the lease is lost, or when Worker.stop() runs out of grace time.
   * `signal.reason` is a TaskAbortedError naming which.
   */
  signal: AbortSignal;
  /** 1 for the first attempt. */
  attempt: number;
  leaseToken: string;
  workerId: string;
  /**
   * Extends the lease now (the worker also does it on a timer). Rejects with a
   * CONFLICT TasklaneError once the lease is gone.
   */
  heartbeat(): Promise<void>;
  /**
   * For workflow tasks: the results of the tasks this one depends on, by workflow key, up to
   * 1 MiB in all; past it an entry is an OmittedParentResult (isOmittedParentResult), whose
   * result is read with `client.tasks.get(entry.taskId)`.
   */
  parents?: Record<string, unknown>;
}

/** Returns the task's result (JSON-serialisable; undefined is sent as null). Throw to fail the attempt. */
export type TaskHandler<TPayload = unknown, TResult = unknown> = (task: Task<TPayload>, ctx: TaskContext) => Promise<TResult> | TResult;

/** Where a problem the worker could not hand back to the handler happened. */
export type WorkerErrorContext =
  /** leaseTasks failed; the worker backs off and polls again. */
  | { phase: "lease" }
  /** A heartbeat failed; after a refusal (CONFLICT) the lease is gone and ctx.signal is aborted. */
  | { phase: "heartbeat"; taskId: string }
  /**
   * completeTask / failTask failed. `refused` (CONFLICT or NOT_FOUND) means the
   * lease had moved on — expired, re-leased or cancelled — and the newer
   * state stands; otherwise the outcome may be lost and the task will run
   * again once its lease expires.
   */
  | { phase: "complete" | "fail"; taskId: string; refused: boolean };

export interface TaskRunSettings<TPayload, TResult> {
  client: TasklaneClient;
  /** Successful outcomes go through here (batched into completeTasks calls). */
  completions: CompletionBatcher;
  /** Failed attempts go through here (failTask); both hold outcomes through a gateway outage. */
  failures: FailureReporter;
  /** Tells how long a task leased ahead waits for its runAt. */
  serverClock: ServerClock;
  handler: TaskHandler<TPayload, TResult>;
  workerId: string;
  leaseSeconds: number;
  heartbeatEveryMs: number;
  report: (error: unknown, context: WorkerErrorContext) => void;
  /** Called once, when the handler has returned or thrown (before its outcome is reported). */
  onHandlerSettled: () => void;
}

/** How much of a refused error message the fallback report quotes (escaped). */
const FALLBACK_EXCERPT_LENGTH = 200;

type Outcome<TResult> = { ok: true; result: TResult } | { ok: false; error: unknown };

export class TaskRun<TPayload, TResult> {
  readonly taskId: string;
  readonly #lease: Lease<TPayload>;
  readonly #settings: TaskRunSettings<TPayload, TResult>;
  /**
   * Made when first needed: the handler reads ctx.signal, the run waits for its runAt,
   * or it is aborted. Quick handlers seldom need one, and one
   * made for every task cost the SDK Worker a fifth of its CPU in the bench's s1 (20.5 against
   * 16.5 ms per 1,000 tasks) through what its young-generation collections kept (6% of its
   * allocation against 1.8%; test/bench/findings.md).
   */
  #controller: AbortController | undefined;
  /**
   * Local estimate, never later than the server's: measured from when the request that granted it
   * was sent plus the time the server says it waited before granting it (a long poll's wait is not
   * the lease's: counting it aborted handlers early and threw their results away).
   */
  #leaseDeadline: number;
  /**
   * The attempt's time budget (the task's timeoutSeconds), which no lease or heartbeat reaches past
   * on the server; measured from the same instant, so never later than the server's either.
   */
  readonly #budgetEnd: number;
  #heartbeatTimer: ReturnType<typeof setTimeout> | undefined;
  #leaseTimer: ReturnType<typeof setTimeout> | undefined;
  #finished = false;
  /** The server refused the lease token: any outcome would be refused too. */
  #leaseGone = false;
  /** Worker.stop() gave up on this task: report nothing, let the lease expire. */
  #abandoned = false;

  constructor(lease: Lease<TPayload>, settings: TaskRunSettings<TPayload, TResult>, requestedAt: number) {
    this.taskId = lease.task.id;
    this.#lease = lease;
    this.#settings = settings;
    const grantedAfter = requestedAt + lease.waitedMs;
    this.#budgetEnd = grantedAfter + lease.task.timeoutSeconds * 1000;
    this.#leaseDeadline = Math.min(grantedAfter + settings.leaseSeconds * 1000, this.#budgetEnd);
  }

  /** Never rejects: every failure is reported to the server or through `report`. */
  async run(): Promise<void> {
    this.#armLeaseTimer();
    this.#scheduleHeartbeat();
    let outcome: Outcome<TResult>;
    try {
      // Leased ahead of its runAt (Worker.startAheadMs): the handler starts no sooner, and not at
      // all when the task was aborted meanwhile (lease lost, shutdown), which reports as it would mid-run.
      if (this.#lease.startInMs > 0) {
        const signal = this.#signal();
        if (!(await this.#settings.serverClock.waitUntil(Date.parse(this.#lease.task.runAt), (ms) => delay(ms, signal)))) throw signal.reason;
      }
      // The lease carries them: no workflow download per task (every task's result, for each of a workflow's tasks).
      const parents = this.#lease.task.workflowId === null ? undefined : (this.#lease.parents ?? {});
      const ctx = new RunContext(() => this.#signal(), this.#lease, this.#settings.workerId, () => this.#heartbeat(), parents);
      outcome = { ok: true, result: await this.#settings.handler(this.#lease.task, ctx) };
    } catch (error: unknown) {
      outcome = { ok: false, error };
    } finally {
      this.#stopTimers();
      this.#settings.onHandlerSettled();
    }
    if (this.#abandoned || this.#leaseGone) return;
    await this.#reportOutcome(outcome);
  }

  /** Worker.stop() ran out of grace: abort the handler, stop heartbeating, report nothing. */
  abandon(): void {
    this.#abandoned = true;
    this.#abort("shutdown");
    this.#stopTimers();
  }

  #abort(reason: TaskAbortReason, cause?: unknown): void {
    const controller = this.#controllerNow();
    if (!controller.signal.aborted) controller.abort(new TaskAbortedError(reason, this.taskId, cause === undefined ? undefined : { cause }));
  }

  #signal(): AbortSignal {
    return this.#controllerNow().signal;
  }

  #controllerNow(): AbortController {
    return (this.#controller ??= new AbortController());
  }

  #stopTimers(): void {
    this.#finished = true;
    clearTimeout(this.#heartbeatTimer);
    clearTimeout(this.#leaseTimer);
  }

  #armLeaseTimer(): void {
    clearTimeout(this.#leaseTimer);
    if (this.#finished) return;
    this.#leaseTimer = setTimeout(() => {
      // Another worker may lease the task now, and the attempt is the server's to end: TIMED_OUT
      // at the budget's end, else LEASE_EXPIRED. An outcome reported now (the handler throwing
      // this abort) was recorded FAILED "aborted: lease-lost" when it beat the server's expiry,
      // and refused when it did not.
      this.#leaseGone = true;
      const why = this.#leaseDeadline >= this.#budgetEnd ? `the task's timeoutSeconds (${this.#lease.task.timeoutSeconds}) ran out` : "no successful heartbeat before the lease ran out";
      this.#abort("lease-lost", new Error(why));
    }, Math.max(0, this.#leaseDeadline - Date.now()));
  }

  #scheduleHeartbeat(): void {
    if (this.#finished || this.#leaseGone) return;
    this.#heartbeatTimer = setTimeout(() => {
      this.#heartbeat()
        .catch((error: unknown) => this.#settings.report(error, { phase: "heartbeat", taskId: this.taskId }))
        .finally(() => this.#scheduleHeartbeat());
    }, this.#settings.heartbeatEveryMs);
  }

  async #heartbeat(): Promise<void> {
    const { client, leaseSeconds } = this.#settings;
    const startedAt = Date.now();
    // A heartbeat that answers after the lease ran out is of no use: bound its wait by what is left.
    const timeoutMs = Math.min(30_000, Math.max(1_000, this.#leaseDeadline - startedAt));
    try {
      const beat = await client.leases.heartbeat(this.taskId, this.#lease.leaseToken, leaseSeconds, { timeoutMs });
      this.#leaseDeadline = Math.max(this.#leaseDeadline, Math.min(startedAt + leaseSeconds * 1000, this.#budgetEnd));
      this.#armLeaseTimer();
      if (beat.cancelRequested) this.#abort("cancelled");
    } catch (error: unknown) {
      if (isTasklaneError(error, ErrorCode.CONFLICT, ErrorCode.NOT_FOUND)) {
        this.#leaseGone = true;
        this.#abort("lease-lost", error);
      }
      throw error;
    }
  }

  async #reportOutcome(outcome: Outcome<TResult>): Promise<void> {
    if (outcome.ok) {
      try {
        await this.#settings.completions.complete({ taskId: this.taskId, leaseToken: this.#lease.leaseToken, result: outcome.result }, this.#leaseDeadline);
        return;
      } catch (error: unknown) {
        if (!isTasklaneError(error, ErrorCode.BAD_USER_INPUT)) {
          this.#reportRefusal(error, "complete");
          return;
        }
        // The result itself was refused (too large, not JSON): the same result would be refused again.
        await this.#fail(`Task result refused: ${error.message}`, false);
        return;
      }
    }
    await this.#fail(messageOf(outcome.error), !(outcome.error instanceof NonRetryableError));
  }

  async #fail(message: string, retryable: boolean): Promise<void> {
    const { failures } = this.#settings;
    try {
      await failures.fail(this.taskId, this.#lease.leaseToken, message, retryable, this.#leaseDeadline);
      return;
    } catch (error: unknown) {
      if (!isTasklaneError(error, ErrorCode.BAD_USER_INPUT)) {
        this.#reportRefusal(error, "fail");
        return;
      }
      // leases.fail (behind failures.fail) already made the text storable, so this is a refusal it did not foresee, and the
      // same message would be refused again. Unreported, the attempt would hold its task RUNNING until
      // the lease expired and then read "lease expired": record the failure with a message any gateway
      // takes (JSON escapes what a store could refuse), naming the refusal.
      const excerpt = JSON.stringify(message.slice(0, FALLBACK_EXCERPT_LENGTH));
      const fallback = `The handler's error could not be stored (${error.message}); it began ${excerpt}`;
      try {
        await failures.fail(this.taskId, this.#lease.leaseToken, fallback, retryable, this.#leaseDeadline);
      } catch (again: unknown) {
        this.#reportRefusal(again, "fail");
      }
    }
  }

  #reportRefusal(error: unknown, phase: "complete" | "fail"): void {
    const refused = isTasklaneError(error, ErrorCode.CONFLICT, ErrorCode.NOT_FOUND);
    this.#settings.report(error, { phase, taskId: this.taskId, refused });
  }
}

/**
 * A handler's TaskContext, with the own, enumerable properties a plain object would have (so
 * `{ ...ctx }` keeps them all), whose signal is made when first read (TaskRun.#controller).
 */
class RunContext implements TaskContext {
  declare readonly signal: AbortSignal;
  declare readonly attempt: number;
  declare readonly leaseToken: string;
  declare readonly workerId: string;
  declare readonly heartbeat: () => Promise<void>;
  declare readonly parents?: Record<string, unknown>;
  readonly #signalOf: () => AbortSignal;

  /**
   * One getter shared by every context: defined with the same accessor, each context keeps
   * the same V8 map, where a getter of its own would give each a map of its own, which the
   * young generation's collections keep (patches/ioredis+6.0.0.patch).
   */
  static readonly #signalProperty: PropertyDescriptor = {
    get(this: RunContext): AbortSignal {
      return this.#signalOf();
    },
    enumerable: true,
  };

  constructor(signalOf: () => AbortSignal, lease: Lease<unknown>, workerId: string, heartbeat: () => Promise<void>, parents: Record<string, unknown> | undefined) {
    this.#signalOf = signalOf;
    Object.defineProperty(this, "signal", RunContext.#signalProperty);
    this.attempt = lease.task.attempts;
    this.leaseToken = lease.leaseToken;
    this.workerId = workerId;
    this.heartbeat = heartbeat;
    if (parents !== undefined) this.parents = parents;
  }
}

/**
 * What a thrown value says, as text. Never throws: whatever a handler throws (an object whose
 * toJSON or toString throws, one with no prototype) must still fail the attempt.
 */
function messageOf(error: unknown): string {
  if (error instanceof Error && typeof error.message === "string") return error.message === "" ? error.name : error.message;
  if (typeof error === "string") return error;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    try {
      return String(error);
    } catch {
      return Object.prototype.toString.call(error);
    }
  }
}
