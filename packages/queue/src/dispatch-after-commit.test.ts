import type { Database, DispatchIntent } from "@tasklane/db";
import { describe, expect, it } from "vitest";
import { FastPathTimeout, dispatchAfterCommit } from "./dispatch-after-commit.js";
import type { TaskDispatcher } from "./task-dispatcher.js";

const intent = { taskId: "task_1", tenantId: "ten_1", queueId: "que_1", outboxId: "7" } as unknown as DispatchIntent;

/** Only what the fast path touches of a Database: the rows it drops once Redis has the jobs. */
function fakeDb(): { db: Database; dropped: string[][] } {
  const dropped: string[][] = [];
  const db = { dispatchedOutbox: { add: (ids: string[]) => dropped.push(ids) } } as unknown as Database;
  return { db, dropped };
}

describe("dispatchAfterCommit", () => {
  it("drops the outbox rows of a dispatch Redis took", async () => {
    const { db, dropped } = fakeDb();
    const errors: unknown[] = [];
    await dispatchAfterCommit(db, { dispatch: async () => undefined } as TaskDispatcher, [intent], (e) => errors.push(e));
    expect(dropped).toEqual([["7"]]);
    expect(errors).toEqual([]);
  });

  it("answers the caller after its wait when Redis does not answer, and leaves the rows to the outbox even if Redis answers later", async () => {
    const { db, dropped } = fakeDb();
    const errors: unknown[] = [];
    let finish: (() => void) | undefined;
    const slow = { dispatch: () => new Promise<void>((resolve) => (finish = resolve)) } as TaskDispatcher;
    const started = Date.now();
    await dispatchAfterCommit(db, slow, [intent], (e) => errors.push(e), 50);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(FastPathTimeout);
    finish?.();
    await new Promise((r) => setTimeout(r, 10));
    expect(dropped).toEqual([]);
  });

  it("reports a failed dispatch once and keeps the rows", async () => {
    const { db, dropped } = fakeDb();
    const errors: unknown[] = [];
    const failing = { dispatch: async () => Promise.reject(new Error("Redis is reconnecting")) } as TaskDispatcher;
    await dispatchAfterCommit(db, failing, [intent], (e) => errors.push(e), 1_000);
    expect(errors.map((e) => (e as Error).message)).toEqual(["Redis is reconnecting"]);
    expect(dropped).toEqual([]);
  });
});
