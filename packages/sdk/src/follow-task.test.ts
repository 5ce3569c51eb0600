import { describe, expect, it, vi } from "vitest";
import type { TaskStatus } from "@tasklane/core/statuses";
import { getEventListeners } from "node:events";
import { followTask, waitUntilFinished, type FollowTaskDeps } from "./follow-task.js";
import type { LiveResource, LiveStreamOptions, TaskEvent } from "./live.js";
import type { Task } from "./types.js";

const state = (status: TaskStatus, attempts: number): Task => ({ id: "t1", status, attempts }) as Task;
let eventIds = 0;
const event = (task: Task): TaskEvent => ({ id: String((eventIds += 1)), taskId: task.id, previousStatus: null, status: task.status, at: "", task });

/**
 * A taskUpdated stream that connects at once (so followTask reads), then sends `events` only after
 * that read has answered: events the gateway queued while the read was on its way.
 */
function scripted(read: Task, events: Task[]): FollowTaskDeps {
  let readAnswered: () => void = () => undefined;
  const answered = new Promise<void>((resolve) => (readAnswered = resolve));
  const live = {
    async *taskUpdates(_filter: unknown, options: LiveStreamOptions): AsyncGenerator<TaskEvent, void, undefined> {
      options.onConnected?.(false);
      await answered;
      for (const task of events) yield event(task);
      await new Promise<never>(() => undefined);
    },
  } as unknown as LiveResource;
  return {
    live,
    read: async () => {
      setImmediate(readAnswered);
      return read;
    },
  };
}

describe("followTask", () => {
  it("never goes back: an event older than the read's state, or one equal to the last, is not yielded", async () => {
    const deps = scripted(state("RETRYING", 1), [
      state("RUNNING", 1), // the first attempt, queued before the read answered: older
      state("QUEUED", 1),
      state("QUEUED", 1), // the same state again
      state("RUNNING", 2),
      state("SUCCEEDED", 2),
    ]);
    const seen: string[] = [];
    for await (const task of followTask(deps, "t1", { resyncMs: 60_000 })) seen.push(`${task.status}/${task.attempts}`);
    expect(seen).toEqual(["RETRYING/1", "QUEUED/1", "RUNNING/2", "SUCCEEDED/2"]);
  });

  it.each(["SUCCEEDED", "DEAD", "CANCELLED", "SKIPPED"] as const)("ends at %s", async (status) => {
    const deps = scripted(state("RUNNING", 1), [state(status, 1), state("QUEUED", 0)]);
    const seen: string[] = [];
    for await (const task of followTask(deps, "t1", { resyncMs: 60_000 })) seen.push(task.status);
    expect(seen).toEqual(["RUNNING", status]);
  });

  it("keeps no ref'd timer: a follow left without return() does not hold the process up on its own", async () => {
    const timers: NodeJS.Timeout[] = [];
    const real = globalThis.setInterval;
    const spy = vi.spyOn(globalThis, "setInterval").mockImplementation(((...args: Parameters<typeof setInterval>) => {
      const timer = real(...args);
      timers.push(timer);
      return timer;
    }) as typeof setInterval);
    try {
      const follow = followTask(scripted(state("QUEUED", 0), []), "t1");
      expect((await follow.next()).value).toMatchObject({ status: "QUEUED" });
      expect(timers.length).toBe(1);
      expect(timers[0]?.hasRef()).toBe(false);
      timers.forEach(clearInterval);
    } finally {
      spy.mockRestore();
    }
  });

  it("leaves nothing on a long-lived signal shared by many waits (no listener, no AbortSignal.any entry)", async () => {
    const shutdown = new AbortController();
    const any = vi.spyOn(AbortSignal, "any");
    try {
      for (let i = 0; i < 50; i++) {
        const done = await waitUntilFinished(scripted(state("RUNNING", 1), [state("SUCCEEDED", 1)]), "t1", { signal: shutdown.signal, timeoutMs: 60_000 });
        expect(done.status).toBe("SUCCEEDED");
      }
      expect(getEventListeners(shutdown.signal, "abort")).toHaveLength(0);
      // Node 20's AbortSignal.any keeps a weak entry on each source for the source's whole life.
      expect(any.mock.calls.filter((call) => call[0].includes(shutdown.signal))).toHaveLength(0);
    } finally {
      any.mockRestore();
    }
  });
});
