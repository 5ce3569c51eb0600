/**
 * One task's states through the taskUpdated subscription, where
 * tasks.waitFor polls: followTask yields each state it learns until the task
 * is terminal; tasks.waitUntilFinished answers the last.
 *
 * It subscribes first and reads the task once the gateway has accepted the
 * socket, so a task that finished before the call is answered by the read and
 * one that finishes after it by an event. The read and the subscription are
 * not ordered on the gateway (graphql-ws never acknowledges a subscribe), and
 * events sent while a lost socket is made again are not replayed, so it reads
 * the task again after every reconnect and every `resyncMs` while it waits: a
 * terminal event lost in either gap delays the end, never hangs it.
 *
 * A read and the events are not ordered either: an event queued before a read
 * answered may carry an older state. Each state is placed by `progressOf`
 * (attempts, then its step within the attempt) and one behind the last yielded
 * is not yielded, nor one equal to it, so a watcher never sees a task go back.
 */
import { TaskStatus, isTerminalStatus } from "@tasklane/core/statuses";
import { ErrorCode, TasklaneError } from "./errors.js";
import type { LiveResource, TaskEvent } from "./live.js";
import type { CallOptions } from "./transport.js";
import type { Task } from "./types.js";

export interface FollowTaskOptions {
  /** Aborting rejects with code ABORTED and closes the socket. */
  signal?: AbortSignal;
  /** Give up (code TIMEOUT) after this long. @defaultValue no limit */
  timeoutMs?: number;
  /** Between the safety reads of the task while no event ends the wait. @defaultValue 15_000 */
  resyncMs?: number;
}

/** What tasks.waitUntilFinished takes. */
export type WaitUntilFinishedOptions = FollowTaskOptions;

export interface FollowTaskDeps {
  live: LiveResource;
  /** tasks.get. */
  read(id: string, opts: CallOptions): Promise<Task | null>;
}

type Wake = { kind: "event"; result: IteratorResult<TaskEvent, void> } | { kind: "failed"; error: unknown } | { kind: "read" };

/**
 * Each new state of task `id` seen by a read or carried by an event, never one older than or equal to
 * the last yielded, ending after the first terminal one (SUCCEEDED, DEAD, CANCELLED, SKIPPED: a DEAD
 * task redriven later is not followed). NOT_FOUND for an unknown or another tenant's id. Breaking the
 * loop closes the socket.
 */
export async function* followTask(deps: FollowTaskDeps, id: string, options: FollowTaskOptions = {}): AsyncGenerator<Task, void, undefined> {
  // One controller stops the stream and the reads: the caller's signal, the timeout or the end of following aborts it.
  // Not AbortSignal.any: on Node 20 it keeps an entry on a long-lived caller signal for each wait, for the signal's life.
  const stop = new AbortController();
  const onCallerAbort = () => stop.abort(options.signal?.reason);
  options.signal?.addEventListener("abort", onCallerAbort, { once: true });
  if (options.signal?.aborted) onCallerAbort();
  let timedOut = false;
  const timeUp =
    options.timeoutMs === undefined
      ? null
      : setTimeout(() => {
          timedOut = true;
          stop.abort(new DOMException(`not finished within ${options.timeoutMs} ms`, "TimeoutError"));
        }, options.timeoutMs).unref();
  let readWanted = false;
  let wakeForRead: (() => void) | null = null;
  const askRead = () => {
    readWanted = true;
    wakeForRead?.();
  };
  const updates = deps.live.taskUpdates({ taskId: id }, { signal: stop.signal, onConnected: askRead });
  // Unref'd: the socket (or graphql-ws's retry timer) keeps the process up while the task is followed, this timer alone must not.
  const resync = setInterval(askRead, options.resyncMs ?? 15_000).unref();
  let pending: Promise<Wake> | null = null;
  let last: Task | null = null;
  /** Whether `task` is news: terminal, or past the last yielded state. */
  const isNews = (task: Task): boolean => {
    if (isTerminalStatus(task.status) || last === null) return true;
    const order = compareProgress(task, last);
    return order > 0 || (order === 0 && JSON.stringify(task) !== JSON.stringify(last));
  };
  try {
    for (;;) {
      pending ??= updates.next().then(
        (result): Wake => ({ kind: "event", result }),
        (error: unknown): Wake => ({ kind: "failed", error }),
      );
      const readNow = new Promise<Wake>((resolve) => {
        wakeForRead = () => resolve({ kind: "read" });
        if (readWanted) wakeForRead();
      });
      const wake = await Promise.race([pending, readNow]);
      wakeForRead = null;
      if (wake.kind === "failed") throw wake.error;
      if (wake.kind === "event" && !wake.result.done) {
        pending = null;
        const task = wake.result.value.task;
        if (!isNews(task)) continue;
        yield (last = task);
        if (isTerminalStatus(task.status)) return;
        continue;
      }
      readWanted = false;
      const task = await deps.read(id, { signal: stop.signal });
      if (task === null) throw new TasklaneError(ErrorCode.NOT_FOUND, `Task ${id} not found`, { operation: "task" });
      if (isNews(task)) yield (last = task);
      if (isTerminalStatus(task.status)) return;
      // The gateway ended the subscription (it does not on its own): nothing would tell of the end.
      if (wake.kind === "event") throw new TasklaneError("NETWORK_ERROR", `taskUpdated(${id}) ended before the task finished`, { operation: "taskUpdated" });
    }
  } catch (error: unknown) {
    if (timedOut && !options.signal?.aborted) {
      throw new TasklaneError("TIMEOUT", `Task ${id} not finished within ${options.timeoutMs} ms`, { cause: error, operation: "taskUpdated" });
    }
    throw error;
  } finally {
    clearInterval(resync);
    clearTimeout(timeUp ?? undefined);
    options.signal?.removeEventListener("abort", onCallerAbort);
    // Ends the stream even while its next() waits (a return() would queue behind it) and waits for its socket to close.
    stop.abort();
    await pending;
    await updates.return(undefined);
  }
}

/** Within one attempt: RUNNING, then RETRYING, then waiting again (QUEUED, SCHEDULED); the ends last. Before the first lease `attempts` is 0. */
const STEP_IN_ATTEMPT: Readonly<Record<TaskStatus, number>> = {
  RUNNING: 0,
  RETRYING: 1,
  QUEUED: 2,
  SCHEDULED: 2,
  BLOCKED: 2,
  SUCCEEDED: 3,
  DEAD: 3,
  CANCELLED: 3,
  SKIPPED: 3,
};

/**
 * Which of two states of one task came later: `attempts` grows by one with each lease (RUNNING) and
 * only a redrive of a DEAD task resets it, where following has already ended. 0: the same step
 * (a reschedule moves QUEUED to SCHEDULED within one).
 */
function compareProgress(a: Task, b: Task): number {
  return a.attempts - b.attempts || STEP_IN_ATTEMPT[a.status] - STEP_IN_ATTEMPT[b.status];
}

/** The task once it is terminal (followTask's last state): SUCCEEDED, DEAD, CANCELLED or SKIPPED. */
export async function waitUntilFinished(deps: FollowTaskDeps, id: string, options: FollowTaskOptions = {}): Promise<Task> {
  for await (const task of followTask(deps, id, options)) {
    if (isTerminalStatus(task.status)) return task;
  }
  // followTask ends only after a terminal state or by throwing.
  throw new TasklaneError("NETWORK_ERROR", `Task ${id}: followed to no end`, { operation: "taskUpdated" });
}
