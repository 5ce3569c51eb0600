import { describe, expect, it } from "vitest";
import type { HubEvent, HubListener } from "./event-hub.js";
import { SlowConsumerError, openEventStream, type EventStreamOptions } from "./event-stream.js";
import { hubEvent as event } from "./test-support/hub-event.js";

/** A stand-in for the hub: records the listener and whether it was removed. */
function fakeHub() {
  const state: { listener?: HubListener; removed: boolean } = { removed: false };
  return {
    state,
    listen: async (listener: HubListener) => {
      state.listener = listener;
      return () => {
        state.removed = true;
      };
    },
    emit: (e: HubEvent) => state.listener?.(e),
  };
}

const open = <T>(hub: ReturnType<typeof fakeHub>, opts: Partial<EventStreamOptions<T>> & Pick<EventStreamOptions<T>, "transform">) =>
  openEventStream<T>({ listen: hub.listen, accept: () => true, ...opts });

describe("openEventStream", () => {
  it("yields transformed values in event order even when transforms finish out of order", async () => {
    const hub = fakeHub();
    const stream = await open(hub, {
      // The first event takes longest: order must still hold.
      transform: async (e) => {
        const n = Number(e.message.eventId);
        await new Promise((r) => setTimeout(r, n === 1 ? 30 : 1));
        return n;
      },
    });
    for (const n of [1, 2, 3]) hub.emit(event(n));
    const got = [await stream.next(), await stream.next(), await stream.next()].map((r) => r.value);
    expect(got).toEqual([1, 2, 3]);
  });

  it("filters with accept and skips events whose transform yields null", async () => {
    const hub = fakeHub();
    const stream = await open(hub, {
      accept: (e) => e.message.taskId === "task_a",
      transform: async (e) => (e.message.eventId === "2" ? null : e.message.eventId),
    });
    hub.emit(event(1));
    hub.emit(event(2));
    hub.emit(event(3, "task_b"));
    hub.emit(event(4));
    expect((await stream.next()).value).toBe("1");
    expect((await stream.next()).value).toBe("4");
  });

  it("return() ends a stream parked waiting for events and removes the listener", async () => {
    const hub = fakeHub();
    const stream = await open(hub, { transform: async () => 1 });
    const pending = stream.next();
    await stream.return?.();
    await expect(pending).resolves.toEqual({ done: true, value: undefined });
    expect(hub.state.removed).toBe(true);
  });

  it("ends a subscriber that falls too far behind with an OVERLOADED error saying events were dropped, not a plain end", async () => {
    const hub = fakeHub();
    let overflowed = false;
    const stream = await open(hub, { transform: async () => 1, maxBuffered: 2, onOverflow: () => (overflowed = true) });
    for (const n of [1, 2, 3]) hub.emit(event(n));
    expect(overflowed).toBe(true);
    expect(hub.state.removed).toBe(true);
    const ended = await stream.next().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(ended).toBeInstanceOf(SlowConsumerError);
    expect(ended).toMatchObject({ code: "OVERLOADED", extensions: { reason: "SLOW_CONSUMER", retryAfterSeconds: 1, maxBuffered: 2 } });
    expect((await stream.next()).done).toBe(true);
  });

  it("a read parked waiting for events when the subscriber overflows ends with the error too", async () => {
    const hub = fakeHub();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const stream = await open(hub, {
      maxBuffered: 2,
      transform: async (e) => {
        if (e.message.eventId === "1") await gate;
        return e.message.eventId;
      },
    });
    hub.emit(event(1));
    // Held in its transform, as a stream is while graphql-ws waits on a socket that does not drain.
    const first = stream.next();
    for (const n of [2, 3, 4]) hub.emit(event(n));
    release();
    await expect(first).rejects.toBeInstanceOf(SlowConsumerError);
  });

  it("a subscriber that unsubscribes ends without an error", async () => {
    const hub = fakeHub();
    const stream = await open(hub, { transform: async () => 1, maxBuffered: 2 });
    await stream.return?.();
    hub.emit(event(1));
    expect(await stream.next()).toEqual({ done: true, value: undefined });
  });

  it("coalesces a backlog into the newest event when asked", async () => {
    const hub = fakeHub();
    const seen: string[] = [];
    const stream = await open(hub, {
      coalesce: true,
      transform: async (e) => {
        seen.push(e.message.eventId);
        return e.message.eventId;
      },
    });
    for (const n of [1, 2, 3]) hub.emit(event(n));
    expect((await stream.next()).value).toBe("3");
    expect(seen).toEqual(["3"]);
  });

  it("ends with the error when a transform fails, and lets go of the listener", async () => {
    const hub = fakeHub();
    const stream = await open(hub, {
      transform: async () => {
        throw new Error("database down");
      },
    });
    hub.emit(event(1));
    await expect(stream.next()).rejects.toThrow("database down");
    expect(hub.state.removed).toBe(true);
  });
});
