/**
 * Tasks (contract: submitTask, submitTasks, task, tasks, cancelTask,
 * redriveTask, deadLetterTasks; additions: discardTask, redriveDeadLetterTasks,
 * discardDeadLetterTasks, rescheduleTask).
 */
import { deadLetterBatchArgsSchema } from "@tasklane/core/schemas/dead-letter-batch";
import { parseInput } from "@tasklane/core/schemas/parse";
import { rescheduleTimeSchema } from "@tasklane/core/schemas/reschedule";
import { submitTaskInputSchema, submitTasksInputSchema } from "@tasklane/core/schemas/task";
import { isTerminalStatus } from "@tasklane/core/statuses";
import { delay } from "../delay.js";
import { ErrorCode, TasklaneError, isTasklaneError } from "../errors.js";
import { ATTEMPT_FIELDS, TASK_FIELDS } from "../graphql/fragments.js";
import type { CallOptions, GraphQLTransport, RetryLog } from "../transport.js";
import type { PageOptions, RescheduleOptions, SubmitTaskInput, Task, TaskConnection, TaskFilter, TaskWithAttempts } from "../types.js";
import { asDate, asIso, checkLocally } from "../validate.js";
import type { ReplayedTask } from "../types.js";
import type { LiveResource } from "../live.js";
import { waitUntilFinished, type WaitUntilFinishedOptions } from "../follow-task.js";

const SUBMIT = `mutation SubmitTask($input: SubmitTaskInput!) { submitTask(input: $input) { ...TaskFields } }
${TASK_FIELDS}`;
const SUBMIT_MANY = `mutation SubmitTasks($inputs: [SubmitTaskInput!]!) { submitTasks(inputs: $inputs) { ...TaskFields } }
${TASK_FIELDS}`;
/** submitTasks answering only the new tasks' ids: what a producer that does not read its tasks back needs. */
const SUBMIT_MANY_IDS = `mutation SubmitTaskIds($inputs: [SubmitTaskInput!]!) { submitTasks(inputs: $inputs) { id } }`;
const GET = `query Task($id: ID!) { task(id: $id) { ...TaskFields attemptHistory { ...AttemptFields } replayOf } }
${TASK_FIELDS}
${ATTEMPT_FIELDS}`;
const LIST = `query Tasks($filter: TaskFilter, $first: Int, $after: String) {
  tasks(filter: $filter, first: $first, after: $after) { nodes { ...TaskFields } pageInfo { hasNextPage endCursor } totalCount eventCursor }
}
${TASK_FIELDS}`;
const DEAD_LETTERS = `query DeadLetterTasks($queue: String, $first: Int, $after: String) {
  deadLetterTasks(queue: $queue, first: $first, after: $after) { nodes { ...TaskFields } pageInfo { hasNextPage endCursor } totalCount }
}
${TASK_FIELDS}`;
const CANCEL = `mutation CancelTask($id: ID!) { cancelTask(id: $id) { ...TaskFields } }
${TASK_FIELDS}`;
const REDRIVE = `mutation RedriveTask($id: ID!) { redriveTask(id: $id) { ...TaskFields } }
${TASK_FIELDS}`;
const RESCHEDULE = `mutation RescheduleTask($id: ID!, $runAt: DateTime, $delaySeconds: Float) {
  rescheduleTask(id: $id, runAt: $runAt, delaySeconds: $delaySeconds) { ...TaskFields }
}
${TASK_FIELDS}`;
const DISCARD = `mutation DiscardTask($id: ID!) { discardTask(id: $id) { ...TaskFields } }
${TASK_FIELDS}`;
const REPLAY = `mutation ReplayTask($id: ID!) { replayTask(id: $id) { ...TaskFields replayOf } }
${TASK_FIELDS}`;
const REDRIVE_DEAD_LETTERS = `mutation RedriveDeadLetterTasks($queue: String, $max: Int) { redriveDeadLetterTasks(queue: $queue, max: $max) { count hasMore } }`;
const DISCARD_DEAD_LETTERS = `mutation DiscardDeadLetterTasks($queue: String, $max: Int) { discardDeadLetterTasks(queue: $queue, max: $max) { count hasMore } }`;

/** What one redriveDeadLetters / discardDeadLetters call did. */
export interface DeadLetterBatch {
  /** Tasks redriven (or discarded) by the call. */
  count: number;
  /** Whether such dead tasks remain: call again until false. */
  hasMore: boolean;
}

export interface DeadLetterBatchOptions {
  /** Only this queue's dead tasks (an unknown name is NOT_FOUND); left out: every queue. */
  queue?: string | null;
  /** At most this many tasks, 1 to 10,000. @defaultValue 1000 */
  max?: number | null;
}

/** The API's default `max` for one bulk dead-letter call. */
const DEFAULT_DEAD_LETTER_BATCH = 1_000;

export interface AllDeadLettersOptions {
  /** Only this queue's dead tasks; left out: every queue. */
  queue?: string | null;
  /** Tasks per call, 1 to 10,000. @defaultValue 1000 */
  batchSize?: number;
  /** After each call, with the total so far. */
  onProgress?(progress: { done: number; batch: DeadLetterBatch }): void;
  /**
   * Once aborted, no further call is made and the count so far is answered (a Ctrl-C that lets the
   * call in flight finish); CallOptions' `signal` gives that call up too.
   */
  stop?: AbortSignal;
}

export interface DeadLetterOptions extends PageOptions {
  /** Only this queue's dead letters. */
  queue?: string | null;
}

export interface WaitForOptions {
  /** Give up (code TIMEOUT) after this long. @defaultValue 60_000 */
  timeoutMs?: number;
  /** Between polls. @defaultValue 250 */
  intervalMs?: number;
  signal?: AbortSignal;
}

export class TasksResource {
  readonly #transport: GraphQLTransport;
  readonly #live: LiveResource | undefined;

  /** `live`: the client's subscriptions, for waitUntilFinished. */
  constructor(transport: GraphQLTransport, live?: LiveResource) {
    this.#transport = transport;
    this.#live = live;
  }

  /** Submits one task. Retried after an ambiguous failure only when it carries an idempotencyKey. */
  async submit<TPayload = unknown>(input: SubmitTaskInput<TPayload>, opts?: CallOptions): Promise<Task<TPayload>> {
    checkLocally("submitTask", () => parseInput(submitTaskInputSchema, { ...input, runAt: asDate(input.runAt) }));
    const data = await this.#transport.execute<{ submitTask: Task<TPayload> }>(
      { operation: "submitTask", document: SUBMIT, idempotent: input.idempotencyKey != null },
      { input: toWire(input) },
      opts,
    );
    return data.submitTask;
  }

  /**
   * Submits up to 1,000 tasks, all or nothing; returns them in input order.
   * Retried after an ambiguous failure only when every input has an idempotencyKey.
   */
  async submitMany<TPayload = unknown>(inputs: SubmitTaskInput<TPayload>[], opts?: CallOptions): Promise<Task<TPayload>[]> {
    return this.#submitTasks<Task<TPayload>>(SUBMIT_MANY, inputs, opts);
  }

  /**
   * submitMany answering only the new tasks' ids, in input order. The gateway
   * then skips completing and serialising every field of every task, about
   * two fifths of its CPU per task in batches of 500 (test/bench/findings.md).
   */
  async submitManyIds(inputs: SubmitTaskInput[], opts?: CallOptions): Promise<string[]> {
    return (await this.#submitTasks<{ id: string }>(SUBMIT_MANY_IDS, inputs, opts)).map((t) => t.id);
  }

  /** The submitTasks call behind submitMany and submitManyIds; `document` chooses what each task carries. */
  async #submitTasks<TAnswer>(document: string, inputs: SubmitTaskInput[], opts?: CallOptions): Promise<TAnswer[]> {
    checkLocally("submitTasks", () => parseInput(submitTasksInputSchema, inputs.map((i, n) => ({ ...i, runAt: asDate(i.runAt, `${n}.runAt`) }))));
    const data = await this.#transport.execute<{ submitTasks: TAnswer[] }>(
      { operation: "submitTasks", document, idempotent: inputs.every((i) => i.idempotencyKey != null) },
      { inputs: inputs.map(toWire) },
      opts,
    );
    return data.submitTasks;
  }

  /** The task with its attempts; null when absent or another tenant's. */
  async get<TPayload = unknown, TResult = unknown>(id: string, opts?: CallOptions): Promise<TaskWithAttempts<TPayload, TResult> | null> {
    const data = await this.#transport.execute<{ task: TaskWithAttempts<TPayload, TResult> | null }>(
      { operation: "task", document: GET, idempotent: true },
      { id },
      opts,
    );
    return data.task;
  }

  /** One page, newest first. */
  async list(filter: TaskFilter = {}, page: PageOptions = {}, opts?: CallOptions): Promise<TaskConnection> {
    let wireFilter: TaskFilter = filter;
    checkLocally("tasks", () => {
      wireFilter = { ...filter, createdAfter: asIso(filter.createdAfter, "filter.createdAfter"), createdBefore: asIso(filter.createdBefore, "filter.createdBefore") };
    });
    const data = await this.#transport.execute<{ tasks: TaskConnection }>(
      { operation: "tasks", document: LIST, idempotent: true },
      { filter: wireFilter, first: page.first, after: page.after },
      opts,
    );
    return data.tasks;
  }

  /** Every task matching `filter`, page by page. */
  async *iterate(filter: TaskFilter = {}, options: { pageSize?: number } & CallOptions = {}): AsyncGenerator<Task, void, undefined> {
    const { pageSize, ...opts } = options;
    let after: string | null = null;
    for (;;) {
      const page: TaskConnection = await this.list(filter, { first: pageSize, after }, opts);
      yield* page.nodes;
      if (!page.pageInfo.hasNextPage || page.pageInfo.endCursor === null) return;
      after = page.pageInfo.endCursor;
    }
  }

  /**
   * Cancels a task; a RUNNING task's worker sees cancelRequested on its next heartbeat. A terminal
   * task is CONFLICT, but for the SDK's own repeat after a lost answer: that finds the task CANCELLED
   * and answers it.
   */
  async cancel(id: string, opts?: CallOptions): Promise<Task> {
    // Idempotent: a repeat after an ambiguous success is refused (CONFLICT), never a second effect.
    return this.#toCancelled("cancelTask", CANCEL, id, opts);
  }

  /** DEAD → QUEUED with a fresh attempt budget. */
  async redrive(id: string, opts?: CallOptions): Promise<Task> {
    // Not idempotent: if the redriven task died again before the repeat, the repeat would redrive it twice.
    const data = await this.#transport.execute<{ redriveTask: Task }>({ operation: "redriveTask", document: REDRIVE, idempotent: false }, { id }, opts);
    return data.redriveTask;
  }

  /**
   * Moves a waiting task's runAt (SCHEDULED, QUEUED or RETRYING; otherwise CONFLICT): to `runAt`,
   * `delaySeconds` from now, or now when neither is given (runNow). It keeps its id, keys, attempts
   * and place in its ordering key. Repeated after a lost answer only with a runAt still ahead, which
   * a repeat sets again; a delay would shift, and "now" (a runAt already past is now too) met by a
   * repeat after the task had started would answer CONFLICT for a call that worked, so those lost
   * answers are the caller's to judge.
   */
  async reschedule(id: string, options: RescheduleOptions = {}, opts?: CallOptions): Promise<Task> {
    let runAt: string | null | undefined;
    checkLocally("rescheduleTask", () => {
      parseInput(rescheduleTimeSchema, { ...options, runAt: asDate(options.runAt) });
      runAt = asIso(options.runAt);
    });
    const data = await this.#transport.execute<{ rescheduleTask: Task }>(
      { operation: "rescheduleTask", document: RESCHEDULE, idempotent: runAt != null && Date.parse(runAt) > Date.now() },
      { id, runAt: runAt ?? null, delaySeconds: options.delaySeconds ?? null },
      opts,
    );
    return data.rescheduleTask;
  }

  /** reschedule to now: a waiting task (SCHEDULED, QUEUED or RETRYING) becomes due at once. */
  async runNow(id: string, opts?: CallOptions): Promise<Task> {
    return this.reschedule(id, {}, opts);
  }

  /**
   * Runs a finished task (SUCCEEDED, DEAD, CANCELLED, SKIPPED; not a workflow's) again as a new task
   * with its queue, type, payload, metadata, priority, retry policy, timeout, callback and ordering
   * key, due now; the original is unchanged. Refused as `submit` would be (quotas, OVERLOADED).
   */
  async replay<TPayload = unknown>(id: string, opts?: CallOptions): Promise<ReplayedTask<TPayload>> {
    // Not idempotent: a repeat after a lost answer would create a second new task.
    const data = await this.#transport.execute<{ replayTask: ReplayedTask<TPayload> }>({ operation: "replayTask", document: REPLAY, idempotent: false }, { id }, opts);
    return data.replayTask;
  }

  /** DEAD → CANCELLED: takes a dead task out of the dead-letter queue, its history kept. A task that is not DEAD is CONFLICT. */
  async discard(id: string, opts?: CallOptions): Promise<Task> {
    // Idempotent: a repeat after an ambiguous success finds the task CANCELLED (CONFLICT), never a second effect.
    return this.#toCancelled("discardTask", DISCARD, id, opts);
  }

  /**
   * cancelTask / discardTask. Repeated by the transport after a lost answer, the call meets its own
   * effect as CONFLICT (the task is CANCELLED now): the task is then read and answered, as the first
   * call would have; any other CONFLICT stands.
   */
  async #toCancelled(operation: "cancelTask" | "discardTask", document: string, id: string, opts?: CallOptions): Promise<Task> {
    const log: RetryLog = { ambiguous: false };
    try {
      const data = await this.#transport.execute<Record<string, Task>>({ operation, document, idempotent: true }, { id }, opts, log);
      return data[operation] as Task;
    } catch (error: unknown) {
      if (!log.ambiguous || !isTasklaneError(error, ErrorCode.CONFLICT)) throw error;
      const task = await this.get(id, opts);
      if (task?.status !== "CANCELLED") throw error;
      return task;
    }
  }

  /**
   * redrive for up to `max` (default 1,000) DEAD tasks outside workflows, of one queue or every
   * queue, the one that died first first; a workflow's dead tasks are left (redrive refuses them).
   */
  async redriveDeadLetters(options: DeadLetterBatchOptions = {}, opts?: CallOptions): Promise<DeadLetterBatch> {
    return this.#deadLetterBatch("redriveDeadLetterTasks", REDRIVE_DEAD_LETTERS, options, opts);
  }

  /** discard for up to `max` (default 1,000) DEAD tasks, of one queue or every queue, the one that died first first; workflow tasks included. */
  async discardDeadLetters(options: DeadLetterBatchOptions = {}, opts?: CallOptions): Promise<DeadLetterBatch> {
    return this.#deadLetterBatch("discardDeadLetterTasks", DISCARD_DEAD_LETTERS, options, opts);
  }

  /**
   * Redrives the dead-letter queue (of one queue, or all) a call at a time until none remain;
   * returns how many were redriven. At most as many as were dead when it began (read first, as
   * the console's "Redrive all" confirms a count): a task redriven here that dies again comes
   * back to the end of the dead-letter queue, and without that bound a call at a time would take
   * it again and again while its endpoint keeps failing. Stops once a call redrives none.
   * A failed call rejects (what earlier calls did stands; calling again goes on from there).
   */
  async redriveAllDeadLetters(options: AllDeadLettersOptions = {}, opts?: CallOptions): Promise<number> {
    return this.#drain((batch) => this.redriveDeadLetters(batch, opts), options, opts);
  }

  /** discardDeadLetters a call at a time until none remain (at most as many as were dead when it began); returns how many were discarded. */
  async discardAllDeadLetters(options: AllDeadLettersOptions = {}, opts?: CallOptions): Promise<number> {
    return this.#drain((batch) => this.discardDeadLetters(batch, opts), options, opts);
  }

  async #deadLetterBatch(
    operation: "redriveDeadLetterTasks" | "discardDeadLetterTasks",
    document: string,
    options: DeadLetterBatchOptions,
    opts?: CallOptions,
  ): Promise<DeadLetterBatch> {
    checkLocally(operation, () => parseInput(deadLetterBatchArgsSchema, options));
    // Not idempotent: a repeat after a lost answer would take up to `max` more tasks (for redrive,
    // ones it had just redriven that died again), so a lost answer is the caller's to judge.
    const data = await this.#transport.execute<Record<string, DeadLetterBatch>>(
      { operation, document, idempotent: false },
      { queue: options.queue ?? null, max: options.max ?? null },
      opts,
    );
    return data[operation] as DeadLetterBatch;
  }

  async #drain(call: (batch: DeadLetterBatchOptions) => Promise<DeadLetterBatch>, options: AllDeadLettersOptions, opts?: CallOptions): Promise<number> {
    const queue = options.queue ?? null;
    const dead = (await this.deadLetters({ queue, first: 1 }, opts)).totalCount;
    const per = options.batchSize ?? DEFAULT_DEAD_LETTER_BATCH;
    let done = 0;
    for (;;) {
      // The first call goes out whatever the count said (an unknown queue is its NOT_FOUND).
      const batch = await call({ queue, max: done === 0 ? per : Math.min(per, dead - done) });
      done += batch.count;
      options.onProgress?.({ done, batch });
      if (!batch.hasMore || batch.count === 0 || done >= dead || options.stop?.aborted === true) return done;
    }
  }

  /** DEAD tasks, the one that died last first. */
  async deadLetters(options: DeadLetterOptions = {}, opts?: CallOptions): Promise<TaskConnection> {
    const data = await this.#transport.execute<{ deadLetterTasks: TaskConnection }>(
      { operation: "deadLetterTasks", document: DEAD_LETTERS, idempotent: true },
      { queue: options.queue, first: options.first, after: options.after },
      opts,
    );
    return data.deadLetterTasks;
  }

  /**
   * Polls until the task is terminal (SUCCEEDED, DEAD, CANCELLED, SKIPPED) and
   * returns it. NOT_FOUND if it does not exist; TIMEOUT if it is not terminal in time.
   */
  async waitFor<TPayload = unknown, TResult = unknown>(id: string, options: WaitForOptions = {}): Promise<TaskWithAttempts<TPayload, TResult>> {
    const timeoutMs = options.timeoutMs ?? 60_000;
    const deadline = Date.now() + timeoutMs;
    const timedOut = () => new TasklaneError("TIMEOUT", `Task ${id} not finished within ${timeoutMs} ms`, { operation: "task" });
    for (;;) {
      // Each read ends at the deadline too, retries included: a gateway that does not answer cannot hold the caller past it.
      const remaining = Math.max(1, deadline - Date.now());
      const timeUp = AbortSignal.timeout(remaining);
      const call: CallOptions = { signal: options.signal ? AbortSignal.any([options.signal, timeUp]) : timeUp };
      let task: TaskWithAttempts<TPayload, TResult> | null;
      try {
        task = await this.get<TPayload, TResult>(id, call);
      } catch (error: unknown) {
        if (timeUp.aborted && !options.signal?.aborted) throw timedOut();
        throw error;
      }
      if (task === null) throw new TasklaneError(ErrorCode.NOT_FOUND, `Task ${id} not found`, { operation: "task" });
      if (isTerminalStatus(task.status)) return task;
      if (Date.now() >= deadline) {
        throw new TasklaneError("TIMEOUT", `Task ${id} still ${task.status} after ${timeoutMs} ms`, { operation: "task" });
      }
      const wait = Math.min(options.intervalMs ?? 250, Math.max(0, deadline - Date.now()));
      if (!(await delay(wait, options.signal))) {
        throw new TasklaneError("ABORTED", `waitFor(${id}): aborted by the caller`, { cause: options.signal?.reason, operation: "task" });
      }
    }
  }

  /**
   * The task once it is terminal (SUCCEEDED, DEAD, CANCELLED, SKIPPED), told by the taskUpdated
   * subscription instead of polls (follow-task.ts): subscribes, then reads the task, so one
   * already finished is answered at once. NOT_FOUND for an unknown or another tenant's id; TIMEOUT
   * after `timeoutMs`; ABORTED when `signal` aborts.
   */
  async waitUntilFinished(id: string, options: WaitUntilFinishedOptions = {}): Promise<Task> {
    if (this.#live === undefined) throw new TypeError("waitUntilFinished needs the client's live updates: use TasklaneClient's tasks");
    return waitUntilFinished({ live: this.#live, read: (taskId, opts) => this.get(taskId, opts) }, id, options);
  }
}

function toWire<TPayload>(input: SubmitTaskInput<TPayload>): Record<string, unknown> {
  return { ...input, runAt: asIso(input.runAt) };
}
