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
 */
import { isTerminalStatus } from "@tasklane/core/statuses";
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
 * Each state of task `id` seen by a read or carried by an event, in the order learnt (a read may
 * repeat a state), ending after the first terminal one. NOT_FOUND for an unknown or another
 * tenant's id. Breaking the loop closes the socket.
 */
export async function* followTask(deps: FollowTaskDeps, id: string, options: FollowTaskOptions = {}): AsyncGenerator<Task, void, undefined> {
  const timeUp = options.timeoutMs === undefined ? null : AbortSignal.timeout(options.timeoutMs);
  const finished = new AbortController();
  const callerStop = AbortSignal.any([options.signal, timeUp].filter((s): s is AbortSignal => s != null));
  let readWanted = false;
  let wakeForRead: (() => void) | null = null;
  const askRead = () => {
    readWanted = true;
    wakeForRead?.();
  };
  const updates = deps.live.taskUpdates({ taskId: id }, { signal: AbortSignal.any([callerStop, finished.signal]), onConnected: askRead });
  const resync = setInterval(askRead, options.resyncMs ?? 15_000);
  let pending: Promise<Wake> | null = null;
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
        yield wake.result.value.task;
        if (isTerminalStatus(wake.result.value.task.status)) return;
        continue;
      }
      readWanted = false;
      const task = await deps.read(id, { signal: callerStop });
      if (task === null) throw new TasklaneError(ErrorCode.NOT_FOUND, `Task ${id} not found`, { operation: "task" });
      yield task;
      if (isTerminalStatus(task.status)) return;
      // The gateway ended the subscription (it does not on its own): nothing would tell of the end.
      if (wake.kind === "event") throw new TasklaneError("NETWORK_ERROR", `taskUpdated(${id}) ended before the task finished`, { operation: "taskUpdated" });
    }
  } catch (error: unknown) {
    if (timeUp?.aborted && !options.signal?.aborted) {
      throw new TasklaneError("TIMEOUT", `Task ${id} not finished within ${options.timeoutMs} ms`, { cause: error, operation: "taskUpdated" });
    }
    throw error;
  } finally {
    clearInterval(resync);
    // Ends the stream even while its next() waits (a return() would queue behind it) and waits for its socket to close.
    finished.abort();
    await pending;
    await updates.return(undefined);
  }
}

/** The task once it is terminal (followTask's last state). */
export async function waitUntilFinished(deps: FollowTaskDeps, id: string, options: FollowTaskOptions = {}): Promise<Task> {
  for await (const task of followTask(deps, id, options)) {
    if (isTerminalStatus(task.status)) return task;
  }
  // followTask ends only after a terminal state or by throwing.
  throw new TasklaneError("NETWORK_ERROR", `Task ${id}: followed to no end`, { operation: "taskUpdated" });
}
