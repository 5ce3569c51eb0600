/**
 * A PULL queue switched to PUSH hands its far-future tasks to horizon
 * promotion (queue-service.ts, HAND_FAR_TASKS_TO_PROMOTION) while PUSH starts
 * lock tasks by id. The switch must lock in the same order, or the two
 * deadlock: here a start holds the smaller id and waits for the larger one,
 * which the switch (in run_at order) took first.
 */
import { startAttemptsByIds } from "@tasklane/db";
import type pg from "pg";
import { describe, expect, it } from "vitest";
import { useGateway } from "../helpers/gateway-fixture.js";
import { asTenant, createTenant, waitFor, type CreatedTenant } from "../helpers/platform.js";

const platform = useGateway({ env: { ALLOW_PRIVATE_TARGETS: "1" } });

const as = (t: CreatedTenant) => asTenant(platform.gateway, t);

const UPSERT = `mutation ($i: UpsertQueueInput!) { upsertQueue(input: $i) { name mode } }`;

/** Backends of the test database waiting for a lock (a row lock or its tuple lock). */
async function lockWaiters(): Promise<number> {
  const res = await platform.database.db.pool.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
  );
  return res.rows[0]?.n ?? 0;
}

describe("switching a queue from PULL to PUSH while tasks are being started", () => {
  it("takes its far-future tasks' locks in id order, so a PUSH start waiting on them does not deadlock with it", async () => {
    const t = await createTenant(platform.gateway);
    await as(t)(UPSERT, { i: { name: "sw", mode: "PULL" } });
    // Ids grow with submission: `late` has the smaller id and the later runAt, both past the 5-minute horizon.
    const late = (await as(t)<{ submitTask: { id: string } }>(`mutation { submitTask(input: {type: "j", queue: "sw", delaySeconds: 1200}) { id } }`)).submitTask.id;
    const soon = (await as(t)<{ submitTask: { id: string } }>(`mutation { submitTask(input: {type: "j", queue: "sw", delaySeconds: 600}) { id } }`)).submitTask.id;
    expect(late < soon).toBe(true);

    // Someone (any transition) holds `late` for a moment.
    const holder: pg.PoolClient = await platform.database.db.pool.connect();
    let start: Promise<unknown> | undefined;
    let swap: Promise<unknown> | undefined;
    try {
      await holder.query("BEGIN");
      await holder.query("SELECT id FROM tasks WHERE id = $1 FOR UPDATE", [late]);
      // A PUSH start of both (stale jobs, say) locks in id order: it waits on `late`, holding nothing yet.
      start = startAttemptsByIds(platform.database.db, [late, soon], { workerId: "w", leaseMs: { timeoutPlusMs: 15_000 }, actor: "worker:w" });
      await waitFor(async () => (await lockWaiters()) >= 1, 10_000, 20);
      // The switch: in run_at order it took `soon` first and queued behind the start for `late`.
      swap = as(t)(UPSERT, { i: { name: "sw", mode: "PUSH", endpointUrl: "http://127.0.0.1:9/sw" } });
      await waitFor(async () => (await lockWaiters()) >= 2, 10_000, 20);
      await holder.query("COMMIT");
    } finally {
      holder.release();
    }
    // The start now gets `late` and wants `soon`: behind a switch that held it, each waited for the other
    // and Postgres aborted one ("deadlock detected").
    const outcomes = await Promise.allSettled([start, swap]);
    expect(outcomes.map((o) => (o.status === "rejected" ? String(o.reason) : "ok"))).toEqual(["ok", "ok"]);
    // The switch did its work: both far tasks are handed to horizon promotion (dispatch generation ahead of what Redis has).
    const rows = await platform.database.db.pool.query("SELECT id FROM tasks WHERE id = ANY($1) AND dispatch_generation > enqueued_generation", [[late, soon]]);
    expect(rows.rowCount).toBe(2);
  }, 30_000);

  it("does not hold the queue's row against the key checks of a transition it waits for", async () => {
    const t = await createTenant(platform.gateway);
    await as(t)(UPSERT, { i: { name: "sw2", mode: "PULL" } });
    const far = (await as(t)<{ submitTask: { id: string } }>(`mutation { submitTask(input: {type: "j", queue: "sw2", delaySeconds: 1200}) { id } }`)).submitTask.id;
    // A transition's statement on `far`, in two steps: its row lock, then its write, whose counter trigger
    // writes this connection's first CANCELLED row of the queue (queue_counters' key check: KEY SHARE on the queue).
    const holder: pg.PoolClient = await platform.database.db.pool.connect();
    let swap: Promise<unknown> | undefined;
    let write: Promise<unknown> | undefined;
    try {
      await holder.query("BEGIN");
      await holder.query("SELECT id FROM tasks WHERE id = $1 FOR UPDATE", [far]);
      // The switch locks the queue's row, then waits for `far`.
      swap = as(t)(UPSERT, { i: { name: "sw2", mode: "PUSH", endpointUrl: "http://127.0.0.1:9/sw2" } });
      swap.catch(() => undefined); // settled below
      await waitFor(async () => (await lockWaiters()) >= 1, 10_000, 20);
      write = holder.query("UPDATE tasks SET status = 'CANCELLED', completed_at = now(), updated_at = now() WHERE id = $1 AND status = 'SCHEDULED'", [far]);
      await write;
      await holder.query("COMMIT");
    } catch (error: unknown) {
      await holder.query("ROLLBACK");
      throw error;
    } finally {
      holder.release();
    }
    // With the queue's row held FOR UPDATE the write waited for the switch, which waited for it: 'deadlock detected'.
    const outcomes = await Promise.allSettled([write, swap]);
    expect(outcomes.map((o) => (o.status === "rejected" ? String(o.reason) : "ok"))).toEqual(["ok", "ok"]);
    expect((await platform.database.db.pool.query("SELECT mode::text AS mode FROM queues WHERE tenant_id = $1 AND name = 'sw2'", [t.tenantId])).rows[0]).toEqual({ mode: "PUSH" });
  }, 30_000);
});
