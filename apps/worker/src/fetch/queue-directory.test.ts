import type { Database, Wakeups } from "@tasklane/db";
import { afterEach, describe, expect, it, vi } from "vitest";
import { QueueDirectory, type ListenForRotations } from "./queue-directory.js";

/**
 * The directory's reload scheduling against a stand-in pool that counts its
 * queries and can hold them: what is under test is how many queries start and
 * when, which a real Postgres would only blur. The SQL itself runs against
 * Postgres in test/integration (signing-rotation, fair-fetcher).
 */
function fakeDatabase() {
  const held: (() => void)[] = [];
  const state = { queries: 0, holding: false };
  const db = {
    pool: {
      options: { connectionString: "postgres://unused/unused" },
      query: async () => {
        state.queries++;
        if (state.holding) await new Promise<void>((resolve) => held.push(resolve));
        return { rows: [] };
      },
    },
  } as unknown as Database;
  /** Lets the oldest held query answer, and lets the directory act on it. */
  const releaseOne = async () => {
    held.shift()?.();
    await flush();
  };
  return { db, state, releaseOne, held };
}

/** A LISTEN session that never connects anywhere: the test calls its onWake, and decides when close() settles. */
function fakeListen(close: () => Promise<void> = async () => undefined) {
  const session: { wake: () => void; closed: boolean } = { wake: () => undefined, closed: false };
  const listen: ListenForRotations = (options) => {
    session.wake = options.onWake;
    const wakeups: Wakeups = {
      listening: true,
      close: async () => {
        await close();
        session.closed = true;
      },
    };
    return wakeups;
  };
  return { listen, session };
}

const quiet = { failed: () => undefined, succeeded: () => undefined };

const flush = async () => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

function settledFlag(promise: Promise<void> | undefined): { settled: boolean } {
  const flag = { settled: false };
  void promise?.then(() => (flag.settled = true));
  return flag;
}

afterEach(() => {
  vi.useRealTimers();
});

describe("QueueDirectory", () => {
  it("coalesces a burst of rotations into one reload under way and one after it", async () => {
    const { db, state, releaseOne } = fakeDatabase();
    const { listen, session } = fakeListen();
    const directory = new QueueDirectory(db, () => undefined, () => undefined, quiet, listen);
    await directory.start(60_000);
    expect(state.queries).toBe(1);
    state.holding = true;

    // `mutation { a: rotateSigningSecret b: rotateSigningSecret ... }`: 100 NOTIFYs, one after another.
    for (let i = 0; i < 100; i++) session.wake();
    await flush();
    expect(state.queries).toBe(2);
    const afterBurst = settledFlag(directory.whenCurrent());

    // The reload under way started before most of the burst: it does not make the directory current.
    await releaseOne();
    expect(state.queries).toBe(3);
    expect(afterBurst.settled).toBe(false);
    // A rotation heard while that second reload runs needs a third one.
    session.wake();
    const afterLast = settledFlag(directory.whenCurrent());
    await releaseOne();
    expect(afterBurst.settled).toBe(true);
    expect(afterLast.settled).toBe(false);
    expect(state.queries).toBe(4);
    await releaseOne();
    expect(afterLast.settled).toBe(true);
    expect(directory.whenCurrent()).toBeUndefined();
    expect(state.queries).toBe(4);
    await directory.stop();
  });

  it("reloads early at most once a second however many unknown queues ask, and still promptly", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "Date"] });
    const { db, state } = fakeDatabase();
    const directory = new QueueDirectory(db, () => undefined, () => undefined, quiet, fakeListen().listen);
    await directory.start(1_000);
    await vi.advanceTimersByTimeAsync(100);
    // A queue created a moment ago: its ask is answered at once, not at the next periodic reload.
    directory.requestReload();
    await vi.advanceTimersByTimeAsync(1);
    expect(state.queries).toBe(2);

    // Many queues the directory never learns, each asking every 10 s: an ask every 10 ms in all.
    const before = state.queries;
    for (let t = 0; t < 5_000; t += 10) {
      directory.requestReload();
      await vi.advanceTimersByTimeAsync(10);
    }
    // 5 periodic reloads and at most 5 early ones (at 200 ms apart: ~25 early).
    expect(state.queries - before).toBeLessThanOrEqual(10);
    await directory.stop();
  });

  it("stop() waits for the LISTEN session to close, and gives up on one that hangs", async () => {
    let closeSession: () => void = () => undefined;
    const { listen, session } = fakeListen(() => new Promise<void>((resolve) => (closeSession = resolve)));
    const directory = new QueueDirectory(fakeDatabase().db, () => undefined, () => undefined, quiet, listen);
    await directory.start(60_000);
    const stopped = settledFlag(directory.stop());
    await flush();
    expect(stopped.settled).toBe(false);
    closeSession();
    await flush();
    expect(session.closed).toBe(true);
    expect(stopped.settled).toBe(true);

    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "Date"] });
    const hanging = new QueueDirectory(fakeDatabase().db, () => undefined, () => undefined, quiet, fakeListen(() => new Promise<void>(() => undefined)).listen);
    await hanging.start(60_000);
    const gaveUp = settledFlag(hanging.stop());
    await vi.advanceTimersByTimeAsync(1_900);
    expect(gaveUp.settled).toBe(false);
    await vi.advanceTimersByTimeAsync(200);
    expect(gaveUp.settled).toBe(true);
  });
});
