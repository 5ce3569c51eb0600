/**
 * deleteQueue: refused (CONFLICT, nothing changed) while the queue has
 * unfinished tasks, a live schedule targets it or a running workflow has tasks
 * in it; the default queue is BAD_USER_INPUT; another tenant's name is
 * NOT_FOUND like a missing one. Deleting takes its finished tasks along (with
 * their attempts and events), frees the name and the cap slot, and clears the
 * queue out of Redis.
 */
import { MAX_QUEUES_PER_TENANT } from "@tasklane/core";
import { createKeySpace, createRedis, type RedisClient } from "@tasklane/queue";
import { TasklaneClient, TasklaneError } from "@tasklane/sdk";
import { deleteQueue, type Database } from "@tasklane/db";
import { explainNodes, rowsRead, type PlanNode } from "../helpers/query-plans.js";
import { losingAnswers, sdkRejection } from "../helpers/sdk-calls.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useGateway } from "../helpers/gateway-fixture.js";
import { asTenant, codeOf, createTenant, gql, type CreatedTenant } from "../helpers/platform.js";

const platform = useGateway({ env: { ALLOW_PRIVATE_TARGETS: "1" } });
let client: RedisClient;

const as = (t: CreatedTenant) => asTenant(platform.gateway, t);

const UPSERT = `mutation ($i: UpsertQueueInput!) { upsertQueue(input: $i) { name } }`;
const DELETE = `mutation ($n: String!) { deleteQueue(name: $n) }`;
const PURGE = `mutation ($n: String!) { purgeQueue(name: $n) { name } }`;

async function submit(t: CreatedTenant, inputs: Record<string, unknown>[]): Promise<string[]> {
  const data = await as(t)<{ submitTasks: { id: string }[] }>(`mutation ($i: [SubmitTaskInput!]!) { submitTasks(inputs: $i) { id } }`, { i: inputs });
  return data.submitTasks.map((x) => x.id);
}

const queueIdOf = async (t: CreatedTenant, name: string) =>
  (await platform.database.db.pool.query<{ id: string }>("SELECT id FROM queues WHERE tenant_id = $1 AND name = $2", [t.tenantId, name])).rows[0]?.id;

const deleteAs = (t: CreatedTenant, name: string) => gql<{ deleteQueue: boolean }>(platform.gateway.url, DELETE, { n: name }, t.apiKey);

async function leaseAndComplete(t: CreatedTenant, queue: string, n: number): Promise<void> {
  const leased = await as(t)<{ leaseTasks: { task: { id: string }; leaseToken: string }[] }>(`mutation ($q: String!, $n: Int) { leaseTasks(queue: $q, workerId: "w", max: $n) { task { id } leaseToken } }`, { q: queue, n });
  for (const l of leased.leaseTasks) await as(t)(`mutation ($id: ID!, $tok: String!) { completeTask(taskId: $id, leaseToken: $tok, result: 1) { status } }`, { id: l.task.id, tok: l.leaseToken });
}

beforeAll(() => {
  client = createRedis(platform.redis.url);
});

afterAll(() => {
  client?.disconnect();
});

describe("deleteQueue", () => {
  it("is refused with CONFLICT while the queue has unfinished tasks, changing nothing; after purgeQueue and its running task's end it deletes the queue and its history", async () => {
    const t = await createTenant(platform.gateway);
    await as(t)(UPSERT, { i: { name: "d", mode: "PULL" } });
    const done = await submit(t, Array.from({ length: 3 }, () => ({ type: "done", queue: "d", priority: "HIGH" })));
    await leaseAndComplete(t, "d", 3);
    const [running] = await submit(t, [{ type: "run", queue: "d", priority: "HIGH" }]);
    const run = await as(t)<{ leaseTasks: { leaseToken: string }[] }>(`mutation { leaseTasks(queue: "d", workerId: "w", max: 1) { leaseToken } }`);
    const waiting = await submit(t, Array.from({ length: 4 }, () => ({ type: "wait", queue: "d" })));
    const queueId = await queueIdOf(t, "d");

    const refused = await deleteAs(t, "d");
    expect(codeOf(refused)).toBe("CONFLICT");
    expect(refused.errors?.[0]?.message).toContain("purgeQueue");
    expect(await queueIdOf(t, "d")).toBe(queueId);
    const all = [...done, running!, ...waiting];
    expect((await platform.database.db.pool.query("SELECT id FROM tasks WHERE id = ANY($1)", [all])).rowCount).toBe(all.length);

    await as(t)(PURGE, { n: "d" });
    // The running task still counts.
    expect(codeOf(await deleteAs(t, "d"))).toBe("CONFLICT");
    await as(t)(`mutation ($id: ID!, $tok: String!) { completeTask(taskId: $id, leaseToken: $tok) { status } }`, { id: running, tok: run.leaseTasks[0]!.leaseToken });

    const deleted = await deleteAs(t, "d");
    expect(deleted.errors).toBeUndefined();
    expect(deleted.data?.deleteQueue).toBe(true);
    expect((await as(t)<{ queue: unknown }>(`{ queue(name: "d") { name } }`)).queue).toBeNull();
    // Its finished tasks went with it, their attempts and audit events too, and its counters.
    expect((await platform.database.db.pool.query("SELECT 1 FROM tasks WHERE id = ANY($1)", [all])).rowCount).toBe(0);
    expect((await platform.database.db.pool.query("SELECT 1 FROM task_events WHERE task_id = ANY($1)", [all])).rowCount).toBe(0);
    expect((await platform.database.db.pool.query("SELECT 1 FROM task_attempts WHERE task_id = ANY($1)", [all])).rowCount).toBe(0);
    expect((await platform.database.db.pool.query("SELECT 1 FROM queue_counters WHERE queue_id = $1", [queueId])).rowCount).toBe(0);
    const usage = await as(t)<{ tenant: { usage: { pendingTasks: number } } }>(`{ tenant { usage { pendingTasks } } }`);
    expect(usage.tenant.usage.pendingTasks).toBe(0);
    // The name is free: a queue of that name is a new one, empty.
    await as(t)(UPSERT, { i: { name: "d", mode: "PULL" } });
    expect(await queueIdOf(t, "d")).not.toBe(queueId);
    const stats = await as(t)<{ queue: { stats: { succeeded: number; queued: number } } }>(`{ queue(name: "d") { stats { succeeded queued } } }`);
    expect(stats.queue.stats).toEqual({ succeeded: 0, queued: 0 });
    // A second delete of the old queue finds a new one of that name, empty: it goes too; then NOT_FOUND.
    expect((await deleteAs(t, "d")).data?.deleteQueue).toBe(true);
    expect(codeOf(await deleteAs(t, "d"))).toBe("NOT_FOUND");
  });

  it("refuses the default queue (BAD_USER_INPUT), another tenant's queue or a missing one (NOT_FOUND), and a key without the manage scope (FORBIDDEN)", async () => {
    const a = await createTenant(platform.gateway);
    const b = await createTenant(platform.gateway);
    await as(a)(UPSERT, { i: { name: "only-a", mode: "PULL" } });
    const def = await deleteAs(a, "default");
    expect(codeOf(def)).toBe("BAD_USER_INPUT");
    expect(await queueIdOf(a, "default")).toBeDefined();
    for (const name of ["only-a", "missing"]) expect(codeOf(await deleteAs(b, name)), name).toBe("NOT_FOUND");
    expect(await queueIdOf(a, "only-a")).toBeDefined();
    expect(codeOf(await deleteAs(a, "bad name"))).toBe("BAD_USER_INPUT");
    const key = await as(a)<{ createApiKey: { secret: string } }>(`mutation { createApiKey(name: "s", scopes: ["submit"]) { secret } }`);
    expect(codeOf(await gql(platform.gateway.url, DELETE, { n: "only-a" }, key.createApiKey.secret))).toBe("FORBIDDEN");
    expect(await queueIdOf(a, "only-a")).toBeDefined();
    // b's queue of the same name is its own: deleting a's leaves it.
    await as(b)(UPSERT, { i: { name: "only-a", mode: "PULL" } });
    expect((await deleteAs(a, "only-a")).data?.deleteQueue).toBe(true);
    expect(await queueIdOf(b, "only-a")).toBeDefined();
  });

  it("frees a place under the queue cap", async () => {
    const t = await createTenant(platform.gateway);
    // The cap's worth of queues (the default one included), written directly: 1,000 mutations would be slow.
    await platform.database.db.pool.query(
      `INSERT INTO queues (id, tenant_id, name, mode) SELECT 'que_cap' || g || '_' || $1, $1, 'q' || g, 'PULL' FROM generate_series(1, $2::int) g`,
      [t.tenantId, MAX_QUEUES_PER_TENANT - 1],
    );
    const over = await gql(platform.gateway.url, UPSERT, { i: { name: "one-more", mode: "PULL" } }, t.apiKey);
    expect(codeOf(over)).toBe("QUOTA_EXCEEDED");
    expect((await deleteAs(t, "q7")).data?.deleteQueue).toBe(true);
    const now = await gql(platform.gateway.url, UPSERT, { i: { name: "one-more", mode: "PULL" } }, t.apiKey);
    expect(now.errors).toBeUndefined();
  });

  it("is refused while a live schedule targets the queue, and allowed once the schedule is deleted", async () => {
    const t = await createTenant(platform.gateway);
    await as(t)(UPSERT, { i: { name: "cron", mode: "PULL" } });
    const s = await as(t)<{ createSchedule: { id: string } }>(
      `mutation { createSchedule(input: { name: "nightly", cron: "0 3 * * *", task: { type: "n", queue: "cron" } }) { id } }`,
    );
    const refused = await deleteAs(t, "cron");
    expect(codeOf(refused)).toBe("CONFLICT");
    expect(refused.errors?.[0]?.message).toContain("nightly");
    await as(t)(`mutation ($id: ID!) { deleteSchedule(id: $id) }`, { id: s.createSchedule.id });
    expect((await deleteAs(t, "cron")).data?.deleteQueue).toBe(true);
  });

  it("is refused while a running workflow has a finished task in the queue (its result feeds the next tasks)", async () => {
    const t = await createTenant(platform.gateway);
    await as(t)(UPSERT, { i: { name: "wfq", mode: "PULL" } });
    await as(t)(`mutation ($i: SubmitWorkflowInput!) { submitWorkflow(input: $i) { id } }`, {
      i: { name: "w", tasks: [{ key: "root", type: "r", queue: "wfq" }, { key: "next", type: "n", queue: "default", dependsOn: ["root"] }] },
    });
    await leaseAndComplete(t, "wfq", 1);
    const refused = await deleteAs(t, "wfq");
    expect(codeOf(refused)).toBe("CONFLICT");
    expect(refused.errors?.[0]?.message).toContain("workflow");
    expect(await queueIdOf(t, "wfq")).toBeDefined();
  });

  it("clears the queue out of Redis: its purged tasks' jobs, its keys and its place in the active set", async () => {
    const t = await createTenant(platform.gateway);
    await as(t)(UPSERT, { i: { name: "pq", mode: "PUSH", endpointUrl: "http://127.0.0.1:9/pq", paused: true } });
    await submit(t, Array.from({ length: 25 }, (_, i) => ({ type: "p", queue: "pq", delaySeconds: i % 2 === 0 ? 0 : 60 })));
    const queueId = (await queueIdOf(t, "pq")) as string;
    const keys = createKeySpace(platform.redis.prefix);
    const name = keys.bullQueueName(t.tenantId, queueId);
    const keysOf = () => client.keys(`${keys.prefix}:${name}:*`);
    expect((await keysOf()).length).toBeGreaterThan(25);
    expect(await client.sismember(keys.activeQueues, name)).toBe(1);
    await as(t)(PURGE, { n: "pq" });
    expect((await deleteAs(t, "pq")).data?.deleteQueue).toBe(true);
    expect(await keysOf()).toEqual([]);
    expect(await client.sismember(keys.activeQueues, name)).toBe(0);
  });

  it("is what the SDK's queues.purge and queues.delete call, with the API's errors", async () => {
    const t = await createTenant(platform.gateway);
    const sdk = new TasklaneClient({ url: platform.gateway.url, apiKey: t.apiKey });
    await sdk.queues.upsert({ name: "sdkq", mode: "PULL" });
    await sdk.tasks.submitMany([{ type: "a", queue: "sdkq" }, { type: "b", queue: "sdkq", delaySeconds: 600 }]);
    const conflict = await sdk.queues.delete("sdkq").catch((e: unknown) => e);
    expect(conflict instanceof TasklaneError && conflict.code).toBe("CONFLICT");
    const purged = await sdk.queues.purge("sdkq");
    expect(purged).toMatchObject({ name: "sdkq", mode: "PULL" });
    expect(await sdk.queues.delete("sdkq")).toBe(true);
    expect(await sdk.queues.get("sdkq")).toBeNull();
    const gone = await sdk.queues.purge("sdkq").catch((e: unknown) => e);
    expect(gone instanceof TasklaneError && gone.code).toBe("NOT_FOUND");
    const def = await sdk.queues.delete("default").catch((e: unknown) => e);
    expect(def instanceof TasklaneError && def.code).toBe("BAD_USER_INPUT");
  });

  it("the SDK's queues.purge is not sent again after a lost answer: a task submitted since stays", async () => {
    const t = await createTenant(platform.gateway);
    const plain = new TasklaneClient({ url: platform.gateway.url, apiKey: t.apiKey });
    await plain.queues.upsert({ name: "lossy", mode: "PULL" });
    const [before] = await plain.tasks.submitMany([{ type: "before", queue: "lossy" }]);
    let after = "";
    // The purge commits and answers; meanwhile the tenant's app submits a task; the answer is lost on the way back.
    const losing = losingAnswers(/^\s*mutation PurgeQueue\b/, async (lost) => {
      if (lost === 1) after = (await plain.tasks.submit({ type: "after", queue: "lossy" })).id;
    });
    const sdk = new TasklaneClient({ url: platform.gateway.url, apiKey: t.apiKey, fetch: losing.fetch });
    await sdkRejection(sdk.queues.purge("lossy"));
    // Sent again (idempotent: true), the repeat cancelled the task submitted after the purge: 'expected 3 to be 1'.
    expect(losing.sent()).toBe(1);
    expect((await plain.tasks.get(before!.id))?.status).toBe("CANCELLED");
    expect((await plain.tasks.get(after))?.status).toBe("QUEUED");
  });

  it("deletes the finished history a bounded walk at a time, whatever the tenant's other queues hold", async () => {
    const t = await createTenant(platform.gateway);
    await as(t)(UPSERT, { i: { name: "small", mode: "PULL" } });
    // 3,000 finished tasks elsewhere (cancelled: the quickest way to finish them), 5 in the queue.
    for (let i = 0; i < 3; i++) await submit(t, Array.from({ length: 1000 }, () => ({ type: "other", queue: "default" })));
    await as(t)(PURGE, { n: "default" });
    await submit(t, Array.from({ length: 5 }, () => ({ type: "mine", queue: "small" })));
    await as(t)(PURGE, { n: "small" });
    // The deleting statements are explained (ANALYZE, rolled back) before they run.
    const plans: PlanNode[][] = [];
    const pool = platform.database.db.pool;
    const query = async (text: string, values?: unknown[]) => {
      if (text.includes("DELETE FROM tasks d")) {
        const c = await pool.connect();
        try {
          await c.query("BEGIN");
          plans.push(await explainNodes(c, text, values ?? []));
        } finally {
          await c.query("ROLLBACK");
          c.release();
        }
      }
      return pool.query(text, values);
    };
    const db = { ...platform.database.db, pool: { query, connect: pool.connect.bind(pool) } } as unknown as Database;
    const deleted = await deleteQueue(db, t.tenantId, { id: (await queueIdOf(t, "small")) as string, name: "small" }, 500);
    expect(deleted).toEqual({ tasks: 5 });
    // Each statement reads its 500 index entries and its own probes; bounding only the rows it deleted,
    // one statement read all 3,005 cancelled tasks to find 5.
    expect(Math.max(...plans.map((p) => rowsRead(p, "tasks")))).toBeLessThanOrEqual(600);
  }, 60_000);

  it("never leaves a schedule naming a deleted queue: a createSchedule racing the deletion waits for it and is NOT_FOUND", async () => {
    const t = await createTenant(platform.gateway);
    await as(t)(UPSERT, { i: { name: "racy", mode: "PULL" } });
    const queueId = (await queueIdOf(t, "racy")) as string;
    // deleteQueue's last transaction, held open: the queue row locked, its checks passed, the row deleted.
    const holder = await platform.database.db.pool.connect();
    let create: Promise<{ errors?: { extensions?: { code?: string } }[] }> | undefined;
    try {
      await holder.query("BEGIN");
      await holder.query("SELECT id FROM queues WHERE id = $1 FOR UPDATE", [queueId]);
      create = gql(platform.gateway.url, `mutation { createSchedule(input: { name: "late", cron: "* * * * *", task: { type: "x", queue: "racy" } }) { id } }`, {}, t.apiKey);
      // The create waits on the row lock (unlocked, it had already written its schedule by now).
      const waiting = async () =>
        Number((await platform.database.db.pool.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")).rows[0].n);
      let settled = false;
      void create.finally(() => {
        settled = true;
      });
      const deadline = Date.now() + 5_000;
      while (!settled && (await waiting()) < 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      await holder.query("DELETE FROM queues WHERE id = $1", [queueId]);
      await holder.query("COMMIT");
    } finally {
      holder.release();
    }
    expect(codeOf((await create)!)).toBe("NOT_FOUND");
    const schedules = await platform.database.db.pool.query("SELECT name FROM schedules WHERE tenant_id = $1 AND template->>'queue' = 'racy'", [t.tenantId]);
    expect(schedules.rows).toEqual([]);
  }, 30_000);

  it("answers a submission racing the deletion NOT_FOUND, as for a queue that never was, and writes nothing", async () => {
    const t = await createTenant(platform.gateway);
    await as(t)(UPSERT, { i: { name: "gone", mode: "PULL" } });
    const queueId = (await queueIdOf(t, "gone")) as string;
    // deleteQueue's last transaction, held open: the queue row locked; the inserts' key checks wait on it.
    const holder = await platform.database.db.pool.connect();
    let answers: Promise<{ errors?: { message: string; extensions?: { code?: string } }[] }>[] = [];
    try {
      await holder.query("BEGIN");
      await holder.query("SELECT id FROM queues WHERE id = $1 FOR UPDATE", [queueId]);
      answers = [
        gql(platform.gateway.url, `mutation { submitTask(input: { type: "late", queue: "gone" }) { id } }`, {}, t.apiKey),
        gql(platform.gateway.url, `mutation { submitWorkflow(input: { name: "late", tasks: [{ key: "a", type: "late", queue: "gone" }] }) { id } }`, {}, t.apiKey),
      ];
      const waiting = async () =>
        Number((await platform.database.db.pool.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")).rows[0].n);
      const deadline = Date.now() + 5_000;
      while ((await waiting()) < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      await holder.query("DELETE FROM queues WHERE id = $1", [queueId]);
      await holder.query("COMMIT");
    } finally {
      holder.release();
    }
    const results = await Promise.all(answers);
    expect(results.map((r) => r.errors?.[0]?.extensions?.code)).toEqual(["NOT_FOUND", "NOT_FOUND"]);
    expect(results[0]!.errors?.[0]?.message).toBe('Queue "gone" not found');
    expect((await platform.database.db.pool.query("SELECT 1 FROM tasks WHERE tenant_id = $1 AND type = 'late'", [t.tenantId])).rowCount).toBe(0);
    expect((await platform.database.db.pool.query("SELECT 1 FROM workflows WHERE tenant_id = $1 AND name = 'late'", [t.tenantId])).rowCount).toBe(0);
  }, 30_000);
});
