/**
 * The pull Worker: leases tasks of one PULL queue, runs a handler per task
 * with at most `concurrency` at once, heartbeats, and reports each outcome.
 *
 * Delivery is at least once. A handler runs again for the same task only when
 * its lease expired (no heartbeat got through: process stalled, died or lost
 * the network) — then the stale worker's outcome is refused by the server and
 * the newer attempt stands. Use the task id as the idempotency key of a
 * handler's side effects.
 */
import { hostname } from "node:os";
import { randomBytes } from "node:crypto";
import { DEFAULT_LEASE_AHEAD_MS, MAX_LEASE_BATCH, MAX_LEASE_SECONDS, MAX_START_AHEAD_MS, MAX_WAIT_SECONDS } from "@tasklane/core/limits";
import { Roster } from "@tasklane/core/roster";
import { ServerClock } from "@tasklane/core/server-clock";
import { TasklaneClient, type TasklaneClientOptions } from "./client.js";
import { delay } from "./delay.js";
import { ErrorCode, TasklaneError } from "./errors.js";
import type { RetryOptions } from "./retry.js";
import type { FetchLike } from "./transport.js";
import type { Lease } from "./types.js";
import { CompletionBatcher } from "./completion-batcher.js";
import { FailureReporter } from "./failure-reporter.js";
import { OutcomeHold } from "./outcome-hold.js";
import { isUnstorable } from "./storable-text.js";
import { TaskRun, type TaskHandler, type WorkerErrorContext } from "./worker-run.js";

export type { TaskContext, TaskHandler, WorkerErrorContext } from "./worker-run.js";

/** Either an existing client, or what it takes to build one. */
export type WorkerConnection =
  | { client: TasklaneClient; url?: never; apiKey?: never }
  | { client?: never; url: string; apiKey: string; fetch?: FetchLike; timeoutMs?: number; retry?: RetryOptions | false };

export interface WorkerSettings<TPayload, TResult> {
  /** The PULL queue to work on. */
  queue: string;
  handler: TaskHandler<TPayload, TResult>;
  /**
   * Most handlers running at once; the worker leases only as many tasks as it has free slots.
   * A handler's slot is free again as soon as it returns: its outcome is reported in the
   * background (batched with others), with at most this many reports outstanding.
   * @defaultValue 10
   */
  concurrency?: number;
  /** Shown in the task's attempt history. @defaultValue `<hostname>-<pid>-<random>` */
  workerId?: string;
  /**
   * Lease length; heartbeats extend it by as much. A task whose worker stops
   * heartbeating runs again this long after the last heartbeat.
   * @defaultValue 30
   */
  leaseSeconds?: number;
  /** @defaultValue leaseSeconds / 3 */
  heartbeatEverySeconds?: number;
  /**
   * Long-poll wait of each leaseTasks call (at most 20).
   * @defaultValue 10
   */
  pollWaitSeconds?: number;
  /**
   * leaseTasks calls the worker keeps in flight at once (1 to 8) while the queue has a
   * backlog (a call came back with every task it asked for), together never asking for
   * more tasks than it has free slots. While one call is on its way, handlers that finish
   * free slots that the next call leases, instead of waiting for the first to come back.
   * Without a backlog one call polls, asking for every free slot.
   * In `npm run bench` (no-op handlers, concurrency 100), 3 against 1 took end-to-end PULL
   * throughput from 2,021–2,255 to 2,815–2,822 tasks/s (commit 66a7b1e).
   * @defaultValue 3
   */
  maxConcurrentPolls?: number;
  /**
   * Delayed tasks and retries are leased this many ms before their runAt (at most 1,000) and
   * their handler starts at runAt by the server's clock (learnt from lease answers, so neither
   * clock skew nor the answer's way back moves it), so the lease call is not part of how late
   * they start. A task held meanwhile takes a concurrency slot. 0 leases nothing before it is due.
   * In `npm run bench` (scenario 3, 1,000 delayed tasks/s) 50 against 0 took the p99 start
   * delay from 14 to 5–6 ms and the max from 27–35 to 15 (commit 9637f5a).
   * The gateway gathers: a waiting lease call answers once some task is due within half of
   * this, with every task due within all of it, so a trickle of delayed tasks costs a call per
   * batch rather than per task, each leased at least half of this ahead.
   * @defaultValue 100 (DEFAULT_LEASE_AHEAD_MS): leases at least 50 ms ahead, as the PUSH worker's WORKER_START_AHEAD_MS
   */
  startAheadMs?: number;
  /**
   * Problems the worker cannot hand back to a handler: failed polls,
   * heartbeats and refused or lost outcomes. The worker carries on.
   * @defaultValue logs to console.error
   */
  onError?: (error: unknown, context: WorkerErrorContext) => void;
}

export type WorkerOptions<TPayload = unknown, TResult = unknown> = WorkerConnection & WorkerSettings<TPayload, TResult>;

export interface StopOptions {
  /**
   * How long to wait for running handlers (and their outcome reports) before
   * aborting them; their leases then expire server-side and the tasks run again.
   * @defaultValue 30_000
   */
  graceMs?: number;
}

export type WorkerState = "idle" | "starting" | "running" | "stopping" | "stopped";

/** After an empty poll that came back this fast, wait the rest before polling again (guards against a hot loop). */
const MIN_EMPTY_POLL_MS = 250;
const MAX_POLL_BACKOFF_MS = 30_000;
/**
 * How long stop() lets lease calls in flight answer before it cuts them off
 * (never longer than its grace). A lease granted just as the call was cut off
 * would reach nobody: the gateway hands back those it sees cut off before it
 * answers, and this covers the answers already on their way.
 */
const POLL_SETTLE_MS = 500;
const MAX_CONCURRENT_POLLS = 8;

/** A task run and its promise, settled once its outcome is reported. */
interface RunMember<TPayload, TResult> {
  readonly run: TaskRun<TPayload, TResult>;
  readonly done: Promise<void>;
}

export class Worker<TPayload = unknown, TResult = unknown> {
  readonly client: TasklaneClient;
  readonly queue: string;
  readonly workerId: string;
  readonly concurrency: number;
  readonly leaseSeconds: number;
  readonly heartbeatEverySeconds: number;
  readonly pollWaitSeconds: number;
  readonly maxConcurrentPolls: number;
  readonly startAheadMs: number;
  readonly #handler: TaskHandler<TPayload, TResult>;
  readonly #onError: (error: unknown, context: WorkerErrorContext) => void;
  /** A Roster, not a Map: a thousand runs a second come and go through it (roster.ts). */
  readonly #runs = new Roster<RunMember<TPayload, TResult>>();
  /** Outcomes (completions and failures) the gateway could not take, sent again while their leases last. */
  readonly #heldOutcomes = new OutcomeHold();
  readonly #completions: CompletionBatcher;
  readonly #failures: FailureReporter;
  /** Learnt from lease answers: when a task leased ahead is due, in this process's time. */
  readonly #serverClock = new ServerClock();
  /** Aborted when stop() starts: no new lease call, no backoff or pause waits out. */
  readonly #stopController = new AbortController();
  /** Aborted a moment later (POLL_SETTLE_MS): the lease calls still waiting for work. */
  readonly #pollController = new AbortController();
  /** Handlers running now; #runs also holds the finished ones whose outcome is still being reported. */
  #handlersRunning = 0;
  /** Slots asked for by lease calls not yet answered: no call asks for them again. */
  #leasing = 0;
  /** The last lease answer was full: more tasks are waiting, so every poll loop leases. */
  #backlog = false;
  #slotWaiters: Array<() => void> = [];
  #state: WorkerState = "idle";
  #loop: Promise<void> | undefined;
  #stopped: Promise<void> | undefined;

  constructor(options: WorkerOptions<TPayload, TResult>) {
    this.client = options.client === undefined ? new TasklaneClient(clientOptionsOf(options)) : options.client;
    if (typeof options.queue !== "string" || options.queue === "") throw new TypeError("queue is required");
    this.queue = options.queue;
    this.workerId = options.workerId ?? `${hostname()}-${process.pid}-${randomBytes(3).toString("hex")}`;
    // Every leaseTasks call carries them, and the gateway refuses such text: each poll would fail, forever.
    if (isUnstorable(this.queue) || isUnstorable(this.workerId)) throw new TypeError("queue and workerId must not contain NUL (U+0000) or unpaired surrogate characters");
    this.concurrency = options.concurrency ?? 10;
    this.leaseSeconds = options.leaseSeconds ?? 30;
    this.heartbeatEverySeconds = options.heartbeatEverySeconds ?? this.leaseSeconds / 3;
    this.pollWaitSeconds = options.pollWaitSeconds ?? 10;
    this.maxConcurrentPolls = options.maxConcurrentPolls ?? 3;
    this.startAheadMs = options.startAheadMs ?? DEFAULT_LEASE_AHEAD_MS;
    this.#handler = options.handler;
    this.#completions = new CompletionBatcher(this.client.leases, undefined, undefined, this.#heldOutcomes);
    this.#failures = new FailureReporter(this.client.leases, this.#heldOutcomes);
    this.#onError = options.onError ?? ((error, context) => defaultOnError(this.workerId, error, context));
    if (!Number.isInteger(this.concurrency) || this.concurrency < 1) throw new RangeError(`concurrency must be an integer >= 1, got ${this.concurrency}`);
    if (!Number.isInteger(this.leaseSeconds) || this.leaseSeconds < 1 || this.leaseSeconds > MAX_LEASE_SECONDS) {
      throw new RangeError(`leaseSeconds must be an integer in 1..${MAX_LEASE_SECONDS}, got ${this.leaseSeconds}`);
    }
    if (!(this.heartbeatEverySeconds > 0 && this.heartbeatEverySeconds < this.leaseSeconds)) {
      throw new RangeError(`heartbeatEverySeconds must be > 0 and < leaseSeconds (${this.leaseSeconds}), got ${this.heartbeatEverySeconds}`);
    }
    if (!(this.pollWaitSeconds >= 0 && this.pollWaitSeconds <= MAX_WAIT_SECONDS)) {
      throw new RangeError(`pollWaitSeconds must be in 0..${MAX_WAIT_SECONDS}, got ${this.pollWaitSeconds}`);
    }
    if (!Number.isInteger(this.maxConcurrentPolls) || this.maxConcurrentPolls < 1 || this.maxConcurrentPolls > MAX_CONCURRENT_POLLS) {
      throw new RangeError(`maxConcurrentPolls must be an integer in 1..${MAX_CONCURRENT_POLLS}, got ${this.maxConcurrentPolls}`);
    }
    if (!Number.isInteger(this.startAheadMs) || this.startAheadMs < 0 || this.startAheadMs > MAX_START_AHEAD_MS) {
      throw new RangeError(`startAheadMs must be an integer in 0..${MAX_START_AHEAD_MS}, got ${this.startAheadMs}`);
    }
  }

  get state(): WorkerState {
    return this.#state;
  }

  /** Handlers running now (including those reporting their outcome). */
  get activeTasks(): number {
    return this.#runs.size;
  }

  /**
   * Checks that the queue exists and is PULL (so a wrong key or name fails
   * here, not in a silent retry loop), then starts polling in the background.
   * Resolves once polling has started; call stop() to end it.
   */
  async start(): Promise<void> {
    if (this.#state !== "idle") throw new Error(`Worker ${this.workerId} cannot start: it is ${this.#state}`);
    this.#state = "starting";
    try {
      await this.#checkQueue();
    } catch (error: unknown) {
      if (this.#state === "starting") this.#state = "idle";
      throw error;
    }
    if (this.#state !== "starting") return; // stop() was called meanwhile
    this.#state = "running";
    this.#loop = Promise.all(Array.from({ length: this.maxConcurrentPolls }, (_, lane) => this.#pollLoop(lane))).then(() => undefined);
  }

  /**
   * Starts no lease call after it is called, lets those in flight answer for
   * up to half a second (tasks they leased run too), waits up to graceMs in
   * all for running handlers and their outcome reports, then aborts the rest
   * (ctx.signal, reason "shutdown") and reports nothing for them. Safe to call
   * more than once.
   */
  stop(options: StopOptions = {}): Promise<void> {
    this.#stopped ??= this.#stop(options.graceMs ?? 30_000);
    return this.#stopped;
  }

  async #stop(graceMs: number): Promise<void> {
    const started = Date.now();
    this.#state = "stopping";
    this.#stopController.abort();
    this.#wakeSlotWaiters();
    const settled = new AbortController();
    await Promise.race([this.#loop, delay(Math.min(graceMs, POLL_SETTLE_MS), settled.signal)]);
    settled.abort();
    this.#pollController.abort();
    await this.#loop;
    graceMs = Math.max(0, graceMs - (Date.now() - started));
    if (this.#runs.size > 0) {
      const graceOver = new AbortController();
      const allDone = Promise.all(this.#runs.values().map((r) => r.done)).then(() => true);
      const inTime = await Promise.race([allDone, delay(graceMs, graceOver.signal).then(() => false)]);
      graceOver.abort();
      if (!inTime) {
        for (const { run } of this.#runs.values()) run.abandon();
        // Outcomes still held for the gateway are given up on (their leases run out) and reported.
        this.#heldOutcomes.drop();
      }
    }
    this.#state = "stopped";
  }

  async #checkQueue(): Promise<void> {
    const queue = await this.client.queues.get(this.queue, { signal: this.#stopController.signal });
    if (queue === null) throw new TasklaneError(ErrorCode.NOT_FOUND, `Queue "${this.queue}" not found`, { operation: "queue" });
    if (queue.mode !== "PULL") {
      throw new TasklaneError(ErrorCode.BAD_USER_INPUT, `Queue "${this.queue}" is a ${queue.mode} queue; a Worker serves PULL queues only`, { operation: "queue" });
    }
  }

  async #pollLoop(lane: number): Promise<void> {
    const stopSignal = this.#stopController.signal;
    let failures = 0;
    while (this.#state === "running") {
      // Only the first loop polls unless the queue has a backlog (the last answer was full):
      // at a trickle, more calls would split each wake-up into smaller answers and race for
      // the same due tasks (npm run bench, scenario 3: PULL p99 at 1,000/s 57–75 ms with one
      // call, 103–130 with three that always polled).
      if (lane > 0 && !this.#backlog) {
        await this.#waitForSlot();
        continue;
      }
      // Leasing the next batch while the last one's outcomes are being recorded keeps the
      // gateway busy with both calls at once; waiting for the reports left each half idle.
      // #runs counts both running handlers and outstanding reports: at most `concurrency` of the latter.
      // Each of the maxConcurrentPolls loops runs this; slots another call has asked for are not free.
      const free = Math.min(this.concurrency - this.#handlersRunning - this.#leasing, 2 * this.concurrency - this.#runs.size - this.#leasing);
      if (free <= 0) {
        await this.#waitForSlot();
        continue;
      }
      const requestedAt = Date.now();
      const requested = Math.min(free, MAX_LEASE_BATCH);
      this.#leasing += requested;
      const answer = await this.client.leases
        .lease<TPayload>(
          {
            queue: this.queue,
            workerId: this.workerId,
            max: requested,
            leaseSeconds: this.leaseSeconds,
            waitSeconds: this.pollWaitSeconds,
            startAheadMs: this.startAheadMs,
          },
          { signal: this.#pollController.signal },
        )
        .then(
          (leases) => ({ leases, receivedAt: performance.now() }),
          (error: unknown) => ({ error }),
        );
      this.#leasing -= requested;
      // A full answer means more tasks wait, so every loop leases; a failed call ends that
      // until one succeeds again, so one loop retries (with its backoff), not every one.
      this.#backlog = "leases" in answer && answer.leases.length === requested;
      // Leases that arrive while stopping are still ours: run them within the grace period.
      if ("leases" in answer) {
        this.#learnServerClock(answer.leases, answer.receivedAt);
        for (const lease of answer.leases) this.#startRun(lease, requestedAt);
      }
      // Slots this call asked for and did not get are free for the other loops.
      this.#wakeSlotWaiters();
      if ("error" in answer) {
        if (this.#state !== "running") break;
        failures++;
        this.#report(answer.error, { phase: "lease" });
        await delay(Math.min(MAX_POLL_BACKOFF_MS, 500 * 2 ** (failures - 1)), stopSignal);
        continue;
      }
      failures = 0;
      const elapsed = Date.now() - requestedAt;
      // After a short batch the next call goes out at once: it long-polls, and the gateway answers
      // when a task is submitted or falls due. Lingering 20 ms to let a batch build up was most of
      // a task's start delay at 1,000 tasks/s (npm run bench, scenarios 3 and 4).
      if (answer.leases.length === 0 && elapsed < MIN_EMPTY_POLL_MS) await delay(MIN_EMPTY_POLL_MS - elapsed, stopSignal);
    }
  }

  /** Every lease held ahead says the server's clock had reached `runAt − startInMs` when its answer left. */
  #learnServerClock(leases: Lease<TPayload>[], receivedAt: number): void {
    for (const lease of leases) {
      if (lease.startInMs > 0) this.#serverClock.observe(Date.parse(lease.task.runAt), lease.startInMs, receivedAt);
    }
  }

  #startRun(lease: Lease<TPayload>, requestedAt: number): void {
    const run = new TaskRun<TPayload, TResult>(
      lease,
      {
        client: this.client,
        completions: this.#completions,
        failures: this.#failures,
        serverClock: this.#serverClock,
        handler: this.#handler,
        workerId: this.workerId,
        leaseSeconds: this.leaseSeconds,
        heartbeatEveryMs: this.heartbeatEverySeconds * 1000,
        report: (error, context) => this.#report(error, context),
        onHandlerSettled: () => {
          this.#handlersRunning--;
          this.#wakeSlotWaiters();
        },
      },
      requestedAt,
    );
    this.#handlersRunning++;
    // The run's finally is never called before add() returns: it runs on a later microtask.
    const done = run.run().finally(() => {
      leave();
      this.#wakeSlotWaiters();
    });
    const leave = this.#runs.add({ run, done });
  }

  #waitForSlot(): Promise<void> {
    return new Promise((resolve) => this.#slotWaiters.push(resolve));
  }

  #wakeSlotWaiters(): void {
    const waiters = this.#slotWaiters;
    this.#slotWaiters = [];
    for (const wake of waiters) wake();
  }

  #report(error: unknown, context: WorkerErrorContext): void {
    try {
      this.#onError(error, context);
    } catch (thrown: unknown) {
      // A throwing onError must not stop the worker.
      defaultOnError(this.workerId, thrown, context);
    }
  }
}

function clientOptionsOf(options: Extract<WorkerConnection, { url: string }>): TasklaneClientOptions {
  const { url, apiKey, fetch, timeoutMs, retry } = options;
  return { url, apiKey, ...(fetch ? { fetch } : {}), ...(timeoutMs === undefined ? {} : { timeoutMs }), ...(retry === undefined ? {} : { retry }) };
}

function defaultOnError(workerId: string, error: unknown, context: WorkerErrorContext): void {
  const where = "taskId" in context ? `${context.phase} ${context.taskId}` : context.phase;
  const refused = "refused" in context && context.refused ? " (refused: the lease had moved on)" : "";
  const message = error instanceof Error ? error.message : String(error);
  console.error(`[tasklane worker ${workerId}] ${where}${refused}: ${message}`);
}
