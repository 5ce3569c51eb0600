/**
 * The fast path's outbox deletes, gathered (DeferredOutboxDeletes): a writer
 * hands its rows over and goes on; rows of several writes leave in one
 * statement; a failed delete is reported and leaves the rows for the outbox
 * dispatcher; closing the database sends what is still waiting. Through
 * dispatchAfterCommit, a failed delete is told apart from a failed dispatch.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createDatabase, DeferredOutboxDeletes, submitTasks } from "@tasklane/db";
import { createKeySpace, createRedis, createTaskDispatcher, dispatchAfterCommit, jobIdFor } from "@tasklane/queue";
import { normalizeTaskSpec, parseInput, submitTaskInputSchema } from "@tasklane/core";
import { createTestDatabase, uniqueRedisPrefix, type TestDatabase } from "../helpers/test-database.js";
import { seedPushQueue, seedTenant } from "../helpers/seed.js";

let t: TestDatabase;
let tenantId: string;

beforeAll(async () => {
  t = await createTestDatabase("odel");
  ({ tenantId } = await seedTenant(t.db));
  await seedPushQueue(t.db, tenantId, "push", "http://127.0.0.1:9/");
});

afterAll(async () => {
  await t?.drop();
});

/** One PUSH submission per row: each statement writes its own outbox row. */
async function outboxRows(count: number): Promise<string[]> {
  const spec = normalizeTaskSpec(parseInput(submitTaskInputSchema, { type: "t", queue: "push" }), Date.now());
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const { dispatch } = await submitTasks(t.db, tenantId, [spec], { horizonMs: 60_000 });
    ids.push(...dispatch.flatMap((d) => (d.outboxId ? [d.outboxId] : [])));
  }
  expect(new Set(ids).size).toBe(count);
  return ids;
}

const remaining = async (ids: string[]) => (await t.db.pool.query("SELECT id FROM outbox WHERE id = ANY($1::bigint[])", [ids])).rowCount;

/** Reads back the ids of each DELETE statement the pool has been sent so far. */
function watchDeletes(pool: pg.Pool): () => string[][] {
  const spy = vi.spyOn(pool, "query");
  return () =>
    spy.mock.calls
      .map(([config, values]) => (typeof config === "string" ? { text: config, values } : (config as pg.QueryConfig)))
      .filter((q) => q.text.startsWith("DELETE FROM outbox"))
      .map((q) => (q.values as unknown[]).flat() as string[]);
}

describe("DeferredOutboxDeletes", () => {
  it("sends the rows of several writes in one statement, and a row added while it is out in the next", async () => {
    const pool = new pg.Pool({ connectionString: t.url, max: 1 });
    try {
      const deletes = new DeferredOutboxDeletes(pool);
      const sent = watchDeletes(pool);
      const [a, b, c, d] = await outboxRows(4);
      const onError = vi.fn();
      deletes.add([a!], onError);
      deletes.add([b!], onError);
      deletes.add([c!, a!], onError);
      const first = deletes.flush();
      deletes.add([d!], onError);
      await first;
      expect(await remaining([a!, b!, c!, d!])).toBe(0);
      expect(sent().map((ids) => [...ids].sort())).toEqual([[a!, b!, c!].sort(), [d!]]);
      expect(onError).not.toHaveBeenCalled();
    } finally {
      await pool.end();
    }
  });

  it("sends on its own after a short wait, without a flush", async () => {
    const pool = new pg.Pool({ connectionString: t.url, max: 1 });
    try {
      const deletes = new DeferredOutboxDeletes(pool);
      const ids = await outboxRows(2);
      deletes.add(ids, () => undefined);
      await vi.waitFor(async () => expect(await remaining(ids)).toBe(0), { timeout: 5_000, interval: 20 });
    } finally {
      await pool.end();
    }
  });

  it("reports a failed delete to each writer once and leaves the rows for the outbox dispatcher", async () => {
    const pool = new pg.Pool({ connectionString: t.url, max: 1 });
    const ids = await outboxRows(3);
    await pool.end(); // every query now fails
    const deletes = new DeferredOutboxDeletes(pool);
    const first = vi.fn();
    const second = vi.fn(() => {
      throw new Error("a reporter that throws");
    });
    deletes.add(ids.slice(0, 2), first);
    deletes.add(ids.slice(2), second);
    await deletes.flush();
    expect(first).toHaveBeenCalledTimes(1);
    expect(second).toHaveBeenCalledTimes(1);
    expect(first.mock.calls[0]![0]).toBeInstanceOf(Error);
    expect(await remaining(ids)).toBe(3);
  });

  it("is flushed when its database closes", async () => {
    const db = createDatabase({ url: t.url, max: 1 });
    const ids = await outboxRows(2);
    db.dispatchedOutbox.add(ids, () => undefined);
    await db.close();
    expect(await remaining(ids)).toBe(0);
  });

  it("through dispatchAfterCommit: the tasks reach Redis, and a delete that fails is reported as one", async () => {
    const redis = createRedis("redis://127.0.0.1:6379/0", "deferred-outbox-test");
    // Ready first: a client still making its first connection counts as lost, and the dispatch would go to the outbox.
    await redis.ping();
    const keys = createKeySpace(uniqueRedisPrefix("odel"));
    const db = createDatabase({ url: t.url, max: 1 });
    try {
      const spec = normalizeTaskSpec(parseInput(submitTaskInputSchema, { type: "t", queue: "push" }), Date.now());
      const { tasks, dispatch } = await submitTasks(t.db, tenantId, [spec], { horizonMs: 60_000 });
      await db.pool.end(); // the delete's statement now fails
      const reported: unknown[] = [];
      await dispatchAfterCommit(db, createTaskDispatcher(redis, keys), dispatch, (error) => reported.push(error));
      expect(reported).toEqual([]); // the dispatch itself went through
      expect(await redis.exists(keys.jobKey(keys.bullQueueName(tenantId, dispatch[0]!.queueId), jobIdFor(tasks[0]!.id, dispatch[0]!.dispatchGeneration)))).toBe(1);
      await db.dispatchedOutbox.flush();
      expect(reported).toHaveLength(1);
      expect((reported[0] as Error).message).toMatch(/^Dispatched, but the outbox rows could not be deleted/);
      expect((reported[0] as Error).cause).toBeInstanceOf(Error);
      expect(await remaining(dispatch.map((d) => d.outboxId!))).toBe(1);
    } finally {
      const left = await redis.keys(`${keys.prefix}:*`);
      if (left.length > 0) await redis.del(...left);
      redis.disconnect();
      await db.prisma.$disconnect();
    }
  });
});
