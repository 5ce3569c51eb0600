/**
 * purgeQueue: cancels a queue's tasks that are not running, through the cancel
 * transition (events, task.cancelled notifications, counters), in batches,
 * leaving RUNNING tasks alone; BLOCKED workflow tasks are cancelled as
 * cancelTask would (dependants SKIPPED); a cancelled PUSH task's job is
 * dropped when a worker takes it. Another tenant's queue is NOT_FOUND.
 */
import { purgeQueue, startAttemptsByIds, type Database } from "@tasklane/db";
import type pg from "pg";
import { createKeySpace, createRedis, JobTaker, type RedisClient } from "@tasklane/queue";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { explainNodes, rowsRead, type PlanNode } from "../helpers/query-plans.js";
import { useGateway } from "../helpers/gateway-fixture.js";
import { asTenant, codeOf, createTenant, gql, type CreatedTenant } from "../helpers/platform.js";

const platform = useGateway({ env: { ALLOW_PRIVATE_TARGETS: "1" } });
let client: RedisClient;

const as = (t: CreatedTenant) => asTenant(platform.gateway, t);

const UPSERT = `mutation ($i: UpsertQueueInput!) { upsertQueue(input: $i) { name } }`;
const PURGE = `mutation ($n: String!) { purgeQueue(name: $n) { name stats { queued scheduled running retrying } } }`;
type Purged = { purgeQueue: { name: string; stats: { queued: number; scheduled: number; running: number; retrying: number } } };

async function submit(t: CreatedTenant, inputs: Record<string, unknown>[]): Promise<string[]> {
  const data = await as(t)<{ submitTasks: { id: string }[] }>(`mutation ($i: [SubmitTaskInput!]!) { submitTasks(inputs: $i) { id } }`, { i: inputs });
  return data.submitTasks.map((x) => x.id);
}

const statuses = async (ids: string[]) =>
  new Map((await platform.database.db.pool.query<{ id: string; status: string }>("SELECT id, status::text FROM tasks WHERE id = ANY($1)", [ids])).rows.map((r) => [r.id, r.status]));

const queueIdOf = async (t: CreatedTenant, name: string) =>
  (await platform.database.db.pool.query<{ id: string }>("SELECT id FROM queues WHERE tenant_id = $1 AND name = $2", [t.tenantId, name])).rows[0]?.id as string;

beforeAll(() => {
  client = createRedis(platform.redis.url);
});

afterAll(() => {
  client?.disconnect();
});

describe("purgeQueue", () => {
  it("cancels QUEUED, SCHEDULED and RETRYING tasks as cancelTask does, leaves RUNNING ones, and keeps the counters right", async () => {
    const t = await createTenant(platform.gateway);
    await as(t)(UPSERT, { i: { name: "p", mode: "PULL" } });
    await as(t)(`mutation { createWebhook(input: { url: "http://127.0.0.1:9/hook", events: ["task.cancelled"] }) { webhook { id } } }`);
    const [running, retrying] = await submit(t, [{ type: "run", queue: "p", priority: "HIGH" }, { type: "retry", queue: "p", priority: "HIGH", backoff: { strategy: "FIXED", delaySeconds: 600 } }]);
    const leased = await as(t)<{ leaseTasks: { task: { id: string }; leaseToken: string }[] }>(`mutation { leaseTasks(queue: "p", workerId: "w", max: 2) { task { id } leaseToken } }`);
    expect(leased.leaseTasks.map((l) => l.task.id).sort()).toEqual([running, retrying].sort());
    const retryLease = leased.leaseTasks.find((l) => l.task.id === retrying)!;
    await as(t)(`mutation ($id: ID!, $tok: String!) { failTask(taskId: $id, leaseToken: $tok, error: "again", retryable: true) { status } }`, { id: retrying, tok: retryLease.leaseToken });
    const queued = await submit(t, Array.from({ length: 5 }, () => ({ type: "q", queue: "p" })));
    const scheduled = await submit(t, [{ type: "s", queue: "p", delaySeconds: 3600 }]);
    // Another queue of the same tenant is not touched.
    const other = await submit(t, [{ type: "o", queue: "default" }]);
    const before = await statuses([running!, retrying!]);
    expect([...before.values()].sort()).toEqual(["RETRYING", "RUNNING"]);

    const purged = await as(t)<Purged>(PURGE, { n: "p" });
    expect(purged.purgeQueue.stats).toEqual({ queued: 0, scheduled: 0, running: 1, retrying: 0 });
    const after = await statuses([running!, retrying!, ...queued, ...scheduled, ...other]);
    expect(after.get(running!)).toBe("RUNNING");
    for (const id of [retrying!, ...queued, ...scheduled]) expect(after.get(id), id).toBe("CANCELLED");
    expect(after.get(other[0]!)).toBe("QUEUED");

    // An audit event each, by the caller, and a task.cancelled notification each (the tenant has a webhook).
    const cancelled = [retrying!, ...queued, ...scheduled];
    const events = await platform.database.db.pool.query("SELECT task_id, from_status::text, actor, reason FROM task_events WHERE task_id = ANY($1) AND to_status = 'CANCELLED'", [cancelled]);
    expect(events.rowCount).toBe(cancelled.length);
    expect(new Set(events.rows.map((r) => r.reason))).toEqual(new Set(["queue purged"]));
    expect(events.rows.every((r) => String(r.actor).startsWith("api-key:"))).toBe(true);
    const notes = await platform.database.db.pool.query("SELECT task_id FROM outbox WHERE kind = 'NOTIFY' AND task_id = ANY($1) AND payload->>'status' = 'CANCELLED'", [cancelled]);
    expect(notes.rowCount).toBe(cancelled.length);
    // The tenant's pending count (usage) dropped with them: only the other queue's task is pending.
    const usage = await as(t)<{ tenant: { usage: { pendingTasks: number } } }>(`{ tenant { usage { pendingTasks } } }`);
    expect(usage.tenant.usage.pendingTasks).toBe(1);

    // Safe to repeat: nothing left to cancel, nothing changes.
    const again = await as(t)<Purged>(PURGE, { n: "p" });
    expect(again.purgeQueue.stats.running).toBe(1);
    const events2 = await platform.database.db.pool.query("SELECT count(*)::int AS n FROM task_events WHERE task_id = ANY($1) AND to_status = 'CANCELLED'", [cancelled]);
    expect(events2.rows[0].n).toBe(cancelled.length);
  });

  it("is NOT_FOUND for a queue the caller does not have, another tenant's included, and needs the scope that manages queues", async () => {
    const a = await createTenant(platform.gateway);
    const b = await createTenant(platform.gateway);
    await as(a)(UPSERT, { i: { name: "mine", mode: "PULL" } });
    const [task] = await submit(a, [{ type: "x", queue: "mine" }]);
    for (const name of ["mine", "nope"]) {
      const res = await gql(platform.gateway.url, PURGE, { n: name }, b.apiKey);
      expect(codeOf(res), name).toBe("NOT_FOUND");
    }
    expect(codeOf(await gql(platform.gateway.url, PURGE, { n: "has space" }, a.apiKey))).toBe("BAD_USER_INPUT");
    const key = await as(a)<{ createApiKey: { secret: string } }>(`mutation { createApiKey(name: "s", scopes: ["submit"]) { secret } }`);
    expect(codeOf(await gql(platform.gateway.url, PURGE, { n: "mine" }, key.createApiKey.secret))).toBe("FORBIDDEN");
    expect((await statuses([task!])).get(task!)).toBe("QUEUED");
  });

  it("cancels in batches: each transaction cancels at most a batch of tasks", async () => {
    const t = await createTenant(platform.gateway);
    await as(t)(UPSERT, { i: { name: "big", mode: "PULL" } });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(...(await submit(t, Array.from({ length: 500 }, (_, n) => ({ type: "b", queue: "big", priority: ["HIGH", "NORMAL", "LOW"][n % 3] })))));
    const batches: number[] = [];
    const result = await purgeQueue(platform.database.db, t.tenantId, await queueIdOf(t, "big"), {
      actor: "test",
      horizonMs: 300_000,
      batch: 1000,
      onBatch: async (b) => {
        batches.push(b.cancelled);
      },
    });
    expect(result.cancelled).toBe(2500);
    expect(batches.slice(0, 3)).toEqual([1000, 1000, 500]);
    // The events of one transaction share its id (xmin): three transactions, none over the batch.
    const tx = await platform.database.db.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM task_events WHERE task_id = ANY($1) AND to_status = 'CANCELLED' GROUP BY xmin::text ORDER BY n DESC",
      [ids],
    );
    expect(tx.rows.map((r) => r.n)).toEqual([1000, 1000, 500]);
  });

  it("runs alongside submissions: every task submitted before it began ends CANCELLED, later ones may stay, and the counters agree with the rows", async () => {
    const t = await createTenant(platform.gateway);
    await as(t)(UPSERT, { i: { name: "live", mode: "PULL" } });
    const early = await submit(t, Array.from({ length: 1000 }, () => ({ type: "e", queue: "live" })));
    let stop = false;
    const during: string[] = [];
    const submitting = (async () => {
      while (!stop) during.push(...(await submit(t, Array.from({ length: 20 }, () => ({ type: "d", queue: "live" })))));
    })();
    await as(t)(PURGE, { n: "live" });
    stop = true;
    await submitting;
    expect([...(await statuses(early)).values()].every((s) => s === "CANCELLED")).toBe(true);
    // Each later task is either cancelled by the purge or still waiting: nothing in between.
    expect([...(await statuses(during)).values()].every((s) => s === "CANCELLED" || s === "QUEUED")).toBe(true);
    const rows = await platform.database.db.pool.query<{ status: string; n: number }>(
      "SELECT status::text, count(*)::int AS n FROM tasks WHERE tenant_id = $1 AND queue_id = $2 GROUP BY status",
      [t.tenantId, await queueIdOf(t, "live")],
    );
    const stats = await as(t)<{ queue: { stats: { queued: number } } }>(`{ queue(name: "live") { stats { queued } } }`);
    expect(stats.queue.stats.queued).toBe(rows.rows.find((r) => r.status === "QUEUED")?.n ?? 0);
  });

  it("cancels a workflow's BLOCKED task in the queue, skipping what depends on it, and leaves its tasks elsewhere", async () => {
    const t = await createTenant(platform.gateway);
    await as(t)(UPSERT, { i: { name: "wq", mode: "PULL" } });
    const wf = await as(t)<{ submitWorkflow: { id: string; tasks: { key: string; task: { id: string } }[] } }>(
      `mutation ($i: SubmitWorkflowInput!) { submitWorkflow(input: $i) { id tasks { key task { id } } } }`,
      {
        i: {
          name: "w",
          tasks: [
            { key: "root", type: "r", queue: "default" },
            { key: "mid", type: "m", queue: "wq", dependsOn: ["root"] },
            { key: "leaf", type: "l", queue: "default", dependsOn: ["mid"] },
          ],
        },
      },
    );
    const id = (key: string) => wf.submitWorkflow.tasks.find((x) => x.key === key)!.task.id;
    await as(t)(PURGE, { n: "wq" });
    const after = await statuses([id("root"), id("mid"), id("leaf")]);
    expect(Object.fromEntries(["root", "mid", "leaf"].map((k) => [k, after.get(id(k))]))).toEqual({ root: "QUEUED", mid: "CANCELLED", leaf: "SKIPPED" });
  });

  it("releases an ordering key's next task in another queue when it cancels the key's waiting task", async () => {
    const t = await createTenant(platform.gateway);
    await as(t)(UPSERT, { i: { name: "ko", mode: "PULL" } });
    await as(t)(UPSERT, { i: { name: "kp", mode: "PUSH", endpointUrl: "http://127.0.0.1:9/kp", paused: true } });
    const [first] = await submit(t, [{ type: "k", queue: "ko", orderingKey: "K" }]);
    const [next] = await submit(t, [{ type: "k", queue: "kp", orderingKey: "K" }]);
    const gen = async () => (await platform.database.db.pool.query("SELECT dispatch_generation FROM tasks WHERE id = $1", [next])).rows[0].dispatch_generation as number;
    const before = await gen();
    await as(t)(PURGE, { n: "ko" });
    expect((await statuses([first!])).get(first!)).toBe("CANCELLED");
    // Given a new dispatch generation (and an outbox row): a worker that dropped its job while `first` waited gets it again.
    expect(await gen()).toBe(before + 1);
  });

  it("leaves a cancelled PUSH task's job in Redis, and a worker that takes it starts nothing", async () => {
    const t = await createTenant(platform.gateway);
    await as(t)(UPSERT, { i: { name: "push", mode: "PUSH", endpointUrl: "http://127.0.0.1:9/push", paused: true } });
    const ids = await submit(t, Array.from({ length: 10 }, () => ({ type: "p", queue: "push" })));
    await as(t)(PURGE, { n: "push" });
    const keys = createKeySpace(platform.redis.prefix);
    const taken = await new JobTaker(client, keys).take(keys.bullQueueName(t.tenantId, await queueIdOf(t, "push")), 100);
    expect(taken.jobs.map((j) => j.data.taskId).sort()).toEqual([...ids].sort());
    const started = await startAttemptsByIds(platform.database.db, ids, { workerId: "w", leaseMs: { timeoutPlusMs: 15_000 }, actor: "worker:w" });
    expect(started).toHaveLength(0);
    expect([...(await statuses(ids)).values()].every((s) => s === "CANCELLED")).toBe(true);
  });

  it("locks each batch by primary key: a batch reads about its own tasks, however many wait in the queue", async () => {
    const t = await createTenant(platform.gateway, "deep", { maxPendingTasks: 100_000 });
    await as(t)(UPSERT, { i: { name: "deep", mode: "PULL" } });
    for (let i = 0; i < 20; i++) await submit(t, Array.from({ length: 1000 }, (_, n) => ({ type: "d", queue: "deep", priority: ["HIGH", "NORMAL", "LOW"][n % 3] })));
    // The first cancelling statement is explained (ANALYZE runs it; rolled back to a savepoint) before it runs for real.
    let plan: PlanNode[] | undefined;
    const explaining = (client: pg.PoolClient) =>
      new Proxy(client, {
        get(target, prop, receiver) {
          if (prop !== "query") return Reflect.get(target, prop, receiver) as unknown;
          return async (text: unknown, values?: unknown[]) => {
            if (plan === undefined && typeof text === "string" && text.includes("SET status = 'CANCELLED'")) {
              await target.query("SAVEPOINT explained");
              plan = await explainNodes(target, text, values ?? []);
              await target.query("ROLLBACK TO SAVEPOINT explained");
            }
            return target.query(text as string, values);
          };
        },
      });
    const pool = platform.database.db.pool;
    const db = { ...platform.database.db, pool: { query: pool.query.bind(pool), connect: async () => explaining(await pool.connect()) } } as unknown as Database;
    const result = await purgeQueue(db, t.tenantId, await queueIdOf(t, "deep"), { actor: "test", horizonMs: 300_000 });
    expect(result.cancelled).toBe(20_000);
    // ~2,000 (the batch's lock probes and updates) with probes by id; the queue's whole waiting lane,
    // filtered against the batch's ids, was 40,000 and ~850 ms a batch.
    expect(rowsRead(plan!, "tasks")).toBeLessThan(10_000);
  }, 120_000);
});
