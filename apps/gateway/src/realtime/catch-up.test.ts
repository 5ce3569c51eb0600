import { describe, expect, it } from "vitest";
import { CatchUp, type CatchUpReads } from "./catch-up.js";
import type { HubListener } from "./event-hub.js";
import { SlowConsumerError, openEventStream } from "./event-stream.js";
import { hubEvent as event } from "./test-support/hub-event.js";

/**
 * Postgres as the catch-up sees it: the subscription's events (ids) and the
 * relay's saved cursor, which a test moves; pages of at most `pageSize`.
 */
function fakeLog(ids: number[], relay: number | null, pageSize = 2) {
  const state = { ids: [...ids], relay: relay === null ? null : BigInt(relay), pages: [] as Array<[bigint, bigint]> };
  const reads: CatchUpReads = {
    relayCursor: async () => state.relay,
    page: async (after, through) => {
      state.pages.push([after, through]);
      const inRange = state.ids.filter((id) => BigInt(id) > after && BigInt(id) <= through).slice(0, pageSize);
      const full = inRange.length === pageSize;
      return { events: inRange.map((id) => event(id)), readTo: full ? BigInt(inRange.at(-1) as number) : through };
    },
  };
  return { state, reads };
}

function fakeHub() {
  let listener: HubListener | undefined;
  let removed = false;
  return {
    listen: async (l: HubListener) => {
      listener = l;
      return () => {
        removed = true;
      };
    },
    emit: (...ns: number[]) => ns.forEach((n) => listener?.(event(n))),
    get removed() {
      return removed;
    },
  };
}

async function openResumed(hub: ReturnType<typeof fakeHub>, reads: CatchUpReads, after: number, opts: { settleWithinMs?: number; maxBuffered?: number } = {}) {
  const catchUp = new CatchUp({ after: BigInt(after), reads, pollMs: 5, settleWithinMs: opts.settleWithinMs ?? 10_000 });
  return openEventStream<number>({
    listen: hub.listen,
    accept: () => true,
    transform: async (e) => Number(e.message.eventId),
    catchUp,
    ...(opts.maxBuffered !== undefined ? { maxBuffered: opts.maxBuffered } : {}),
  });
}

async function take(stream: AsyncIterableIterator<number>, n: number): Promise<number[]> {
  const got: number[] = [];
  for (let i = 0; i < n; i++) got.push((await stream.next()).value as number);
  return got;
}

describe("a resumed subscription's catch-up", () => {
  it("reads back after the cursor up to the relay's, then the gap up to the first live event, then goes live: in id order, each once", async () => {
    // The client has 3. The relay has saved 7; 9 and 11 were published before the listener (its cursor not yet saved past them).
    const log = fakeLog([2, 3, 5, 7, 9, 11, 12], 7);
    const hub = fakeHub();
    const stream = await openResumed(hub, log.reads, 3);
    hub.emit(12, 13);
    expect(await take(stream, 6)).toEqual([5, 7, 9, 11, 12, 13]);
    // Pages: (3, 7], then (7, 11] (12 - 1): the gap before the first live event; 12 is not read back.
    expect(log.state.pages.map(([a, t]) => [Number(a), Number(t)])).toEqual([
      [3, 7],
      [7, 11],
    ]);
  });

  it("drops live events it already sent from Postgres", async () => {
    const log = fakeLog([4, 5, 6, 8], 6);
    const hub = fakeHub();
    const stream = await openResumed(hub, log.reads, 3);
    // 5 and 6 reach the listener live too (published after it was registered, before the relay saved 6).
    hub.emit(5, 6, 8);
    expect(await take(stream, 4)).toEqual([4, 5, 6, 8]);
  });

  it("waits for the relay to save a cursor past a batch it published just before the listener, then reads that batch back", async () => {
    const log = fakeLog([4, 5], 3);
    const hub = fakeHub();
    const stream = await openResumed(hub, log.reads, 3);
    const first = stream.next();
    await new Promise((r) => setTimeout(r, 30));
    log.state.relay = 5n;
    expect((await first).value).toBe(4);
    expect((await stream.next()).value).toBe(5);
    // Live from here: 6 comes through, a late 5 would not.
    hub.emit(5, 6);
    expect((await stream.next()).value).toBe(6);
  });

  it("goes live without the relay's cursor moving once settleWithinMs has passed (a relay with nothing to publish saves nothing)", async () => {
    const log = fakeLog([], 3);
    const hub = fakeHub();
    const stream = await openResumed(hub, log.reads, 3, { settleWithinMs: 20 });
    const next = stream.next();
    await new Promise((r) => setTimeout(r, 60));
    hub.emit(4);
    expect((await next).value).toBe(4);
  });

  it("a cursor ahead of the relay's reads nothing until the relay passes it, and drops live events at or below it", async () => {
    const log = fakeLog([4, 5, 6], 3);
    const hub = fakeHub();
    const stream = await openResumed(hub, log.reads, 5);
    hub.emit(4, 5, 6);
    expect((await stream.next()).value).toBe(6);
    expect(log.state.pages).toEqual([]);
  });

  it("ends with SlowConsumerError when live events pile up past maxBuffered while it reads back", async () => {
    const log = fakeLog([4, 5, 6, 7], 7);
    const hub = fakeHub();
    const stream = await openResumed(hub, log.reads, 3, { maxBuffered: 2 });
    hub.emit(8, 9, 10);
    await expect(take(stream, 5)).rejects.toBeInstanceOf(SlowConsumerError);
    expect(hub.removed).toBe(true);
  });

  it("keeps live events it will read back out of the buffer, so a long catch-up's repeats do not fill it", async () => {
    const log = fakeLog([4, 5, 6, 7, 8], 8);
    const hub = fakeHub();
    const stream = await openResumed(hub, log.reads, 3, { maxBuffered: 2 });
    // Four repeats of read-back events and one new one: only the new one takes room.
    hub.emit(5, 6, 7, 8, 9);
    expect(await take(stream, 6)).toEqual([4, 5, 6, 7, 8, 9]);
  });

  it("a read that fails ends the subscription with its error and removes the listener", async () => {
    const hub = fakeHub();
    const reads: CatchUpReads = {
      relayCursor: async () => 9n,
      page: async () => {
        throw new Error("connection lost");
      },
    };
    const stream = await openResumed(hub, reads, 3);
    await expect(stream.next()).rejects.toThrow("connection lost");
    expect(hub.removed).toBe(true);
  });

  it("stops reading back when the subscriber leaves", async () => {
    const log = fakeLog([4, 5, 6, 7], 7, 1);
    const hub = fakeHub();
    const stream = await openResumed(hub, log.reads, 3);
    expect((await stream.next()).value).toBe(4);
    await stream.return?.();
    expect((await stream.next()).done).toBe(true);
    expect(log.state.pages.length).toBe(1);
    expect(hub.removed).toBe(true);
  });
});
