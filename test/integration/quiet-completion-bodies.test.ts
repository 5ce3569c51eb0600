/**
 * The quiet completion path (the PUSH worker's and the SDK Worker's outcomes)
 * keeps no task, so its statements send no task bodies back: whole rows of
 * ordering-key tasks (payloads up to 256 KiB) went through the process only
 * to be dropped. Postgres sits behind a TCP proxy that counts what it sends.
 */
import { completeAttemptsQuietly, createDatabase, startAttemptsFromQueue, submitTasks, type Database } from "@tasklane/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";
import { startTcpProxy, type TcpProxy } from "../helpers/tcp-proxy.js";
import { seedNotifierTenant, taskSpec } from "./notifier-harness.js";

const TASKS = 20;
const BLOB = "x".repeat(200 * 1024);

let tdb: TestDatabase;
let proxy: TcpProxy;
let proxied: Database;

beforeAll(async () => {
  tdb = await createTestDatabase("quiet_bodies");
  proxy = await startTcpProxy("127.0.0.1", Number(new URL(tdb.url).port || 5432));
  proxied = createDatabase({ url: proxy.rewrite(tdb.url), max: 2 });
});

afterAll(async () => {
  await proxied?.close();
  await proxy?.close();
  await tdb?.drop();
});

describe("quiet completions", () => {
  it("record ordering-key tasks' outcomes without reading their payloads back", async () => {
    const t = await seedNotifierTenant(tdb.db);
    // Each task its own ordering key: all start at once, and their completion takes the statement that releases keys.
    const specs = Array.from({ length: TASKS }, (_, n) => taskSpec({ type: "keyed", orderingKey: `k${n}`, payload: { n, blob: BLOB } }));
    await submitTasks(tdb.db, t.tenantId, specs, { horizonMs: 0, actor: "test" });
    const started: Awaited<ReturnType<typeof startAttemptsFromQueue>> = [];
    for (let i = 0; i < 10 && started.length < TASKS; i++) {
      const more = await startAttemptsFromQueue(tdb.db, t.queueId, TASKS, 60, { workerId: "test", leaseMs: 60_000, actor: "test" });
      if (more.length === 0) break;
      started.push(...more);
    }
    expect(started).toHaveLength(TASKS);
    await proxied.pool.query("SELECT 1"); // the connection is open before counting

    const before = proxy.bytesFromTarget;
    const { refused } = await completeAttemptsQuietly(
      proxied,
      started.map((s) => ({ taskId: s.task.id, leaseGeneration: s.task.leaseGeneration, result: { ok: true } })),
      "test",
    );
    const read = proxy.bytesFromTarget - before;
    expect(refused).toEqual([]);
    const { rows } = await tdb.db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM tasks WHERE status = 'SUCCEEDED'");
    expect(rows[0]?.n).toBe(TASKS);
    // The payloads alone are TASKS × 200 KiB (4 MB); the rows without them a few KB.
    expect(read).toBeLessThan(200 * 1024);
  });
});
