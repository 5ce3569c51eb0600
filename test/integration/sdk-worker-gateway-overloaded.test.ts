/**
 * An SDK Worker whose handlers finished while the gateway's Postgres is cut
 * keeps their outcomes (completions and failures) and reports them once the
 * gateway answers again, while
 * their leases last: the gateway answers 503 OVERLOADED (Retry-After 2 s) for
 * as long as the cut, longer than the transport's own three attempts, after
 * which the Worker used to drop each outcome and the task ran again when its
 * lease expired. The real gateway (in process) with Postgres behind a TCP proxy.
 */
import { NonRetryableError, TasklaneClient, Worker, type WorkerErrorContext } from "@tasklane/sdk";
import { describe, expect, it } from "vitest";
import { useGatewayBehindPostgresProxy } from "../helpers/gateway-fixture.js";
import { createTenant } from "../helpers/platform.js";

const TASKS = 20;

describe("SDK Worker while the gateway's Postgres is cut", () => {
  const platform = useGatewayBehindPostgresProxy("sdkcut");

  it("holds finished outcomes and reports them once the gateway answers: each task SUCCEEDED or DEAD once, its handler run once", async () => {
    const { gateway, proxy, database: tdb } = platform;
    const { apiKey } = await createTenant(gateway);
    const client = new TasklaneClient({ url: gateway.url, apiKey });
    const errors: Array<{ error: unknown; context: WorkerErrorContext }> = [];
    const runs = new Map<string, number>();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const worker = new Worker({
      client,
      queue: "default",
      concurrency: TASKS,
      pollWaitSeconds: 1,
      leaseSeconds: 60,
      onError: (error, context) => errors.push({ error, context }),
      handler: async (task) => {
        runs.set(task.id, (runs.get(task.id) ?? 0) + 1);
        await gate;
        // Every other task fails: its failTask is held like a completion (it was dropped, and the
        // task stayed RUNNING until its 60 s lease ran out).
        if (Number(task.type.slice(1)) % 2 === 1) throw new NonRetryableError(`failed ${task.id}`);
        return { done: task.id };
      },
    });
    const ids: string[] = [];
    for (let i = 0; i < TASKS; i++) ids.push((await client.tasks.submit({ type: `t${i}` })).id);
    await worker.start();
    try {
      const deadline = Date.now() + 20_000;
      while (runs.size < TASKS && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(runs.size).toBe(TASKS);
      await proxy.cut();
      release();
      // Past the transport's three attempts (Retry-After 2 s each).
      await new Promise((r) => setTimeout(r, 8_000));
      const restoredAt = Date.now();
      await proxy.restore();
      let statuses: string[] = [];
      while (Date.now() < restoredAt + 20_000) {
        const { rows } = await tdb.db.pool.query<{ status: string }>("SELECT status FROM tasks WHERE id = ANY($1)", [ids]);
        statuses = rows.map((r) => r.status);
        if (statuses.length === TASKS && statuses.every((s) => s === "SUCCEEDED" || s === "DEAD")) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      console.log(`all settled ${Date.now() - restoredAt} ms after Postgres came back`);
      expect(statuses.filter((s) => s === "SUCCEEDED")).toHaveLength(TASKS / 2);
      expect(statuses.filter((s) => s === "DEAD")).toHaveLength(TASKS / 2);
      const { rows } = await tdb.db.pool.query<{ id: string; type: string; status: string; attempts: number; result: unknown; last_error: string | null }>(
        "SELECT id, type, status, attempts, result, last_error FROM tasks WHERE id = ANY($1)",
        [ids],
      );
      for (const row of rows) {
        if (Number(row.type.slice(1)) % 2 === 1) expect(row).toMatchObject({ status: "DEAD", attempts: 1, last_error: `failed ${row.id}` });
        else expect(row).toMatchObject({ status: "SUCCEEDED", attempts: 1, result: { done: row.id } });
      }
      expect([...runs.values()].every((n) => n === 1)).toBe(true);
      expect(errors.filter((e) => e.context.phase === "complete" || e.context.phase === "fail")).toEqual([]);
    } finally {
      await worker.stop({ graceMs: 5_000 });
    }
  }, 60_000);
});
