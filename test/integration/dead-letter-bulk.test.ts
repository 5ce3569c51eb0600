/**
 * redriveDeadLetterTasks / discardDeadLetterTasks over real Postgres and
 * Redis: a tenant's dead-letter queue redriven (or discarded) a call of up
 * to `max` at a time, the one that died first first, each task exactly as
 * redriveTask (discardTask) changes it; workflow tasks left by redrive;
 * refusals change nothing; two bulk calls at once never change a task twice.
 */
import { describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import { IdPrefix, newId } from "@tasklane/core";
import { DEAD_LETTER_STATEMENT_BATCH, discardDeadTasks, redriveDeadTasks, redriveTask, type Queryable } from "@tasklane/db";
import { createKeySpace, jobIdFor } from "@tasklane/queue";
import { useGateway } from "../helpers/gateway-fixture.js";
import { codeOf, createTenant, gql, waitFor } from "../helpers/platform.js";
import { explainRecorded, recordingDatabase, rowsRead } from "../helpers/query-plans.js";
import { seedPushQueue } from "../helpers/seed.js";

const REDRIVE = `mutation ($q: String, $m: Int) { redriveDeadLetterTasks(queue: $q, max: $m) { count hasMore } }`;
const DISCARD = `mutation ($q: String, $m: Int) { discardDeadLetterTasks(queue: $q, max: $m) { count hasMore } }`;

interface Batch {
  count: number;
  hasMore: boolean;
}

/**
 * `n` DEAD tasks written straight into the table, as a queue's tasks look
 * after 3 failed attempts; they died one millisecond apart, in the order
 * returned (an hour ago onwards), so the first returned died first.
 */
async function seedDead(
  pool: Queryable,
  tenantId: string,
  queueId: string,
  n: number,
  opts: { workflowId?: string; callbackUrl?: string; diedSecondsAgo?: number } = {},
): Promise<string[]> {
  const ids = Array.from({ length: n }, () => newId(IdPrefix.task));
  await pool.query(
    `INSERT INTO tasks (id, tenant_id, queue_id, type, status, run_at, created_at, completed_at, attempts, max_attempts, last_error,
                        backoff_strategy, backoff_delay_seconds, backoff_jitter, timeout_seconds, workflow_id, workflow_key, callback_url)
     SELECT id, $2, $3, 'dead', 'DEAD', now() - interval '2 hours', now() - interval '2 hours',
            now() - $6::int * interval '1 second' + ord * interval '1 millisecond', 3, 3, 'HTTP 503: down',
            'EXPONENTIAL', 1, true, 60, $4, CASE WHEN $4::text IS NULL THEN NULL ELSE 'k' || ord END, $5
       FROM unnest($1::text[]) WITH ORDINALITY AS u(id, ord)`,
    [ids, tenantId, queueId, opts.workflowId ?? null, opts.callbackUrl ?? null, opts.diedSecondsAgo ?? 3600],
  );
  return ids;
}

describe("bulk dead-letter operations", () => {
  const platform = useGateway();
  const pool = () => platform.database.db.pool;

  async function tenant() {
    const t = await createTenant(platform.gateway);
    const call = async (query: string, variables: Record<string, unknown>) => {
      const res = await gql<Record<string, Batch>>(platform.gateway.url, query, variables, t.apiKey);
      if (res.errors) throw new Error(JSON.stringify(res.errors));
      return Object.values(res.data!)[0]!;
    };
    const queueId = async (name: string) =>
      (await pool().query<{ id: string }>("SELECT id FROM queues WHERE tenant_id = $1 AND name = $2", [t.tenantId, name])).rows[0]!.id;
    const statuses = async (ids: string[]) =>
      (await pool().query<{ status: string; n: number }>("SELECT status, count(*)::int AS n FROM tasks WHERE id = ANY($1) GROUP BY status", [ids])).rows.reduce<
        Record<string, number>
      >((acc, r) => ({ ...acc, [r.status]: r.n }), {});
    const eventCount = async (ids: string[], reason: string) =>
      (await pool().query<{ n: number; tasks: number }>("SELECT count(*)::int AS n, count(DISTINCT task_id)::int AS tasks FROM task_events WHERE task_id = ANY($1) AND reason = $2", [ids, reason]))
        .rows[0]!;
    return { ...t, redrive: (v: Record<string, unknown>) => call(REDRIVE, v), discard: (v: Record<string, unknown>) => call(DISCARD, v), queueId, statuses, eventCount };
  }

  it("redrives 2,500 dead tasks in calls of 1,000, the one that died first first, each as redriveTask does, jobs in Redis", async () => {
    const t = await tenant();
    const hooks = await seedPushQueue(platform.database.db, t.tenantId, "hooks", "https://example.com/hooks");
    const ids = await seedDead(pool(), t.tenantId, hooks, 2_500);

    const first = await t.redrive({ m: 1_000 });
    expect(first).toEqual({ count: 1_000, hasMore: true });
    // The 1,000 that died first, and none of the others.
    expect(await t.statuses(ids.slice(0, 1_000))).toEqual({ QUEUED: 1_000 });
    expect(await t.statuses(ids.slice(1_000))).toEqual({ DEAD: 1_500 });
    expect(await t.redrive({ m: 1_000 })).toEqual({ count: 1_000, hasMore: true });
    expect(await t.redrive({ m: 1_000 })).toEqual({ count: 500, hasMore: false });
    expect(await t.redrive({})).toEqual({ count: 0, hasMore: false });

    const rows = await pool().query<{ n: number; fresh: number }>(
      `SELECT count(*)::int AS n,
              count(*) FILTER (WHERE status = 'QUEUED' AND attempts = 0 AND attempts_before_redrive = 3 AND completed_at IS NULL
                                 AND run_at > now() - interval '1 minute' AND dispatch_generation = 1 AND last_error = 'HTTP 503: down')::int AS fresh
         FROM tasks WHERE id = ANY($1)`,
      [ids],
    );
    expect(rows.rows[0]).toEqual({ n: 2_500, fresh: 2_500 });
    // One audit event each, DEAD -> QUEUED, attempt number where the history left off, by the caller's key.
    const events = await pool().query<{ n: number; tasks: number; shaped: number }>(
      `SELECT count(*)::int AS n, count(DISTINCT task_id)::int AS tasks,
              count(*) FILTER (WHERE from_status = 'DEAD' AND to_status = 'QUEUED' AND attempt = 3 AND actor LIKE 'api-key:%')::int AS shaped
         FROM task_events WHERE task_id = ANY($1) AND reason = 'redrive'`,
      [ids],
    );
    expect(events.rows[0]).toEqual({ n: 2_500, tasks: 2_500, shaped: 2_500 });

    // The post-commit fast path put every job in the tenant's queue and deleted the outbox rows.
    const keys = createKeySpace(platform.redis.prefix);
    const redis = new Redis(platform.redis.url, { maxRetriesPerRequest: 1 });
    try {
      const pipeline = redis.pipeline();
      for (const id of ids) pipeline.exists(keys.jobKey(keys.bullQueueName(t.tenantId, hooks), jobIdFor(id, 1)));
      const found = (await pipeline.exec())!.filter(([, n]) => n === 1).length;
      expect(found).toBe(2_500);
    } finally {
      redis.disconnect();
    }
    const outbox = await pool().query<{ n: number }>("SELECT count(*)::int AS n FROM outbox WHERE tenant_id = $1 AND kind = 'DISPATCH_TASK'", [t.tenantId]);
    expect(outbox.rows[0]!.n).toBe(0);
  });

  it("redriven PULL tasks run again: leased and completed, their attempt numbers going on", async () => {
    const t = await tenant();
    const ids = await seedDead(pool(), t.tenantId, await t.queueId("default"), 3);
    expect(await t.redrive({ q: "default" })).toEqual({ count: 3, hasMore: false });
    const api = async <T>(query: string, variables: Record<string, unknown>) => {
      const res = await gql<T>(platform.gateway.url, query, variables, t.apiKey);
      if (res.errors) throw new Error(JSON.stringify(res.errors));
      return res.data as T;
    };
    const { leaseTasks } = await api<{ leaseTasks: { leaseToken: string; task: { id: string } }[] }>(
      `mutation { leaseTasks(queue: "default", workerId: "w", max: 10) { leaseToken task { id } } }`,
      {},
    );
    expect(leaseTasks.map((l) => l.task.id).sort()).toEqual([...ids].sort());
    for (const l of leaseTasks) {
      await api(`mutation ($id: ID!, $t: String!) { completeTask(taskId: $id, leaseToken: $t, result: {ok: true}) { status } }`, { id: l.task.id, t: l.leaseToken });
    }
    expect(await t.statuses(ids)).toEqual({ SUCCEEDED: 3 });
    const attempts = await pool().query<{ attempt: number }>("SELECT attempt FROM task_events WHERE task_id = ANY($1) AND to_status = 'SUCCEEDED'", [ids]);
    expect(attempts.rows.map((r) => r.attempt)).toEqual([4, 4, 4]);
  });

  it("takes only the named queue's tasks, and leaves workflow tasks (redriveTask refuses them) uncounted", async () => {
    const t = await tenant();
    const hooks = await seedPushQueue(platform.database.db, t.tenantId, "hooks", "https://example.com/hooks");
    const inHooks = await seedDead(pool(), t.tenantId, hooks, 10);
    const inDefault = await seedDead(pool(), t.tenantId, await t.queueId("default"), 5);
    const workflowId = newId(IdPrefix.workflow);
    await pool().query("INSERT INTO workflows (id, tenant_id, name, status, completed_at) VALUES ($1, $2, 'wf', 'FAILED', now())", [workflowId, t.tenantId]);
    const inWorkflow = await seedDead(pool(), t.tenantId, hooks, 4, { workflowId, diedSecondsAgo: 7200 });

    expect(await t.redrive({ q: "default" })).toEqual({ count: 5, hasMore: false });
    expect(await t.statuses(inDefault)).toEqual({ QUEUED: 5 });
    expect(await t.statuses(inHooks)).toEqual({ DEAD: 10 });
    // The workflow's tasks died first, yet are neither redriven nor counted, nor reported as remaining.
    expect(await t.redrive({ q: "hooks", m: 10 })).toEqual({ count: 10, hasMore: false });
    expect(await t.redrive({})).toEqual({ count: 0, hasMore: false });
    expect(await t.statuses(inHooks)).toEqual({ QUEUED: 10 });
    expect(await t.statuses(inWorkflow)).toEqual({ DEAD: 4 });
    // Discard takes workflow tasks, as discardTask does.
    expect(await t.discard({ q: "hooks" })).toEqual({ count: 4, hasMore: false });
    expect(await t.statuses(inWorkflow)).toEqual({ CANCELLED: 4 });
  });

  it("refuses another tenant's or an unknown queue with NOT_FOUND, a max outside 1..10,000 or a bad name with BAD_USER_INPUT, a read-only key with FORBIDDEN; nothing changes", async () => {
    const t = await tenant();
    const other = await tenant();
    await seedPushQueue(platform.database.db, other.tenantId, "theirs", "https://example.com/theirs");
    const ids = await seedDead(pool(), t.tenantId, await t.queueId("default"), 20);
    const readKey = await gql<{ createApiKey: { secret: string } }>(platform.gateway.url, `mutation { createApiKey(name: "r", scopes: ["read"]) { secret } }`, {}, t.apiKey);
    const cases: [string, Record<string, unknown>, string, string?][] = [
      [REDRIVE, { q: "theirs" }, "NOT_FOUND"],
      [DISCARD, { q: "theirs" }, "NOT_FOUND"],
      [REDRIVE, { q: "nope" }, "NOT_FOUND"],
      [DISCARD, { q: "nope" }, "NOT_FOUND"],
      [REDRIVE, { m: 0 }, "BAD_USER_INPUT"],
      [REDRIVE, { m: 10_001 }, "BAD_USER_INPUT"],
      [DISCARD, { m: 0 }, "BAD_USER_INPUT"],
      [DISCARD, { m: 10_001 }, "BAD_USER_INPUT"],
      [REDRIVE, { q: "" }, "BAD_USER_INPUT"],
      [REDRIVE, {}, "FORBIDDEN", readKey.data!.createApiKey.secret],
      [DISCARD, {}, "FORBIDDEN", readKey.data!.createApiKey.secret],
    ];
    for (const [query, variables, code, key] of cases) {
      const res = await gql(platform.gateway.url, query, variables, key ?? t.apiKey);
      expect(codeOf(res), `${query.slice(11, 25)} ${JSON.stringify(variables)}`).toBe(code);
    }
    expect(await t.statuses(ids)).toEqual({ DEAD: 20 });
    const events = await pool().query<{ n: number }>("SELECT count(*)::int AS n FROM task_events WHERE tenant_id = $1", [t.tenantId]);
    expect(events.rows[0]!.n).toBe(0);
  });

  it("two bulk redrives at once and single redrives among them redrive each task once, with one event each", async () => {
    const t = await tenant();
    const ids = await seedDead(pool(), t.tenantId, await t.queueId("default"), 1_200);
    const db = platform.database.db;
    const bulk = () => redriveDeadTasks(db, t.tenantId, { queue: null, max: 10_000, actor: "test", horizonMs: 300_000, statementBatch: 40 });
    // Singles over tasks both bulk calls reach for; each either wins (QUEUED) or finds the task QUEUED (CONFLICT).
    const singles = ids.slice(0, 60).map((id) => redriveTask(db, t.tenantId, id, "test", 300_000).then(() => 1, () => 0));
    const [a, b, ...won] = await Promise.all([bulk(), bulk(), ...singles]);
    const singleWins = (won as number[]).reduce((s, n) => s + n, 0);
    expect(a.count + b.count + singleWins).toBe(1_200);
    expect(a.count).toBeGreaterThan(0);
    expect(b.count).toBeGreaterThan(0);
    expect(await t.statuses(ids)).toEqual({ QUEUED: 1_200 });
    expect(await t.eventCount(ids, "redrive")).toEqual({ n: 1_200, tasks: 1_200 });
    const budgets = await pool().query<{ n: number }>("SELECT count(*)::int AS n FROM tasks WHERE id = ANY($1) AND attempts_before_redrive = 3 AND dispatch_generation = 1", [ids]);
    expect(budgets.rows[0]!.n).toBe(1_200);
  });

  it("does not meet again in the same call a task it redrove that died again meanwhile", async () => {
    const t = await tenant();
    const ids = await seedDead(pool(), t.tenantId, await t.queueId("default"), 20);
    let killed = false;
    const done = await redriveDeadTasks(platform.database.db, t.tenantId, {
      queue: null,
      max: 100,
      actor: "test",
      horizonMs: 300_000,
      statementBatch: 5,
      // The first task redriven fails for good before the call's next statement (a worker was quick).
      async afterBatch() {
        if (killed) return;
        killed = true;
        await pool().query("UPDATE tasks SET status = 'DEAD', completed_at = now() WHERE id = $1", [ids[0]]);
      },
    });
    expect(done).toEqual({ count: 20, hasMore: false });
    expect(await t.eventCount(ids, "redrive")).toEqual({ n: 20, tasks: 20 });
    expect(await t.statuses([ids[0]!])).toEqual({ DEAD: 1 });
  });

  it("two bulk discards at once discard each task once, with one event and one task.cancelled outbox row each", async () => {
    const t = await tenant();
    const ids = await seedDead(pool(), t.tenantId, await t.queueId("default"), 1_200, { callbackUrl: "https://example.com/cb" });
    const db = platform.database.db;
    const bulk = () => discardDeadTasks(db, t.tenantId, { queue: null, max: 10_000, actor: "test", statementBatch: 40 });
    const [a, b] = await Promise.all([bulk(), bulk()]);
    expect(a.count + b.count).toBe(1_200);
    expect(await t.statuses(ids)).toEqual({ CANCELLED: 1_200 });
    expect(await t.eventCount(ids, "discard")).toEqual({ n: 1_200, tasks: 1_200 });
    const notify = await pool().query<{ n: number; tasks: number }>(
      "SELECT count(*)::int AS n, count(DISTINCT task_id)::int AS tasks FROM outbox WHERE task_id = ANY($1) AND kind = 'NOTIFY' AND payload->>'status' = 'CANCELLED'",
      [ids],
    );
    expect(notify.rows[0]).toEqual({ n: 1_200, tasks: 1_200 });
  });

  it("discards 2,500 dead tasks in calls of 1,000 with their task.cancelled outbox rows, keeping attempts, result and error", async () => {
    const t = await tenant();
    const ids = await seedDead(pool(), t.tenantId, await t.queueId("default"), 2_500, { callbackUrl: "https://example.com/cb" });
    const answers = [await t.discard({ m: 1_000 }), await t.discard({ m: 1_000 }), await t.discard({ m: 1_000 })];
    expect(answers).toEqual([
      { count: 1_000, hasMore: true },
      { count: 1_000, hasMore: true },
      { count: 500, hasMore: false },
    ]);
    const rows = await pool().query<{ kept: number }>(
      "SELECT count(*)::int AS kept FROM tasks WHERE id = ANY($1) AND status = 'CANCELLED' AND attempts = 3 AND last_error = 'HTTP 503: down' AND completed_at IS NOT NULL",
      [ids],
    );
    expect(rows.rows[0]!.kept).toBe(2_500);
    expect(await t.eventCount(ids, "discard")).toEqual({ n: 2_500, tasks: 2_500 });
    const notify = await pool().query<{ n: number }>("SELECT count(DISTINCT task_id)::int AS n FROM outbox WHERE task_id = ANY($1) AND kind = 'NOTIFY'", [ids]);
    expect(notify.rows[0]!.n).toBe(2_500);
  });

  it("refuses OVERLOADED before anything changes when the platform backlog is at its cap", async () => {
    const t = await tenant();
    // The tenant's own 1,000 queued tasks are more than a tenth of a cap of 1,000.
    await seedDead(pool(), t.tenantId, await t.queueId("default"), 1_000);
    expect(await t.redrive({ m: 1_000 })).toEqual({ count: 1_000, hasMore: false });
    const capped = await platform.startAnother({ env: { GLOBAL_MAX_PENDING_TASKS: "1000" } });
    const more = await seedDead(pool(), t.tenantId, await t.queueId("default"), 10);
    await waitFor(async () => codeOf(await gql(capped.url, REDRIVE, {}, t.apiKey)) === "OVERLOADED", 30_000, 200);
    expect(await t.statuses(more)).toEqual({ DEAD: 10 });
  });

  /** A Database whose batch statements (those locking candidates) are kept with the transaction settings they ran under. */
  function recordBatchStatements() {
    const recorded = recordingDatabase(pool());
    return { db: recorded.db as never, statements: () => recorded.statements.filter((s) => s.text.includes("SKIP LOCKED")) };
  }

  it("reads candidates from the dead-letter index, with and without a queue filter", async () => {
    const t = await tenant();
    const defaultQueue = await t.queueId("default");
    const hooks = await seedPushQueue(platform.database.db, t.tenantId, "hooks", "https://example.com/hooks");
    await seedDead(pool(), t.tenantId, defaultQueue, 1_200);
    await seedDead(pool(), t.tenantId, hooks, 1_200);
    // Many tasks that are not dead around them, none in hooks: its share of the tasks (5%) says
    // nothing of its share of the dead ones (half), as after an outage of its endpoint.
    await pool().query(
      `INSERT INTO tasks (id, tenant_id, queue_id, type, status, run_at, created_at, completed_at, attempts, max_attempts,
                          backoff_strategy, backoff_delay_seconds, backoff_jitter, timeout_seconds)
       SELECT id, $1, $2, 'done', 'SUCCEEDED', now(), now(), now(), 1, 3, 'EXPONENTIAL', 1, true, 60 FROM unnest($3::text[]) AS u(id)`,
      [t.tenantId, defaultQueue, Array.from({ length: 20_000 }, () => newId(IdPrefix.task))],
    );
    await pool().query("ANALYZE tasks");
    const { db, statements } = recordBatchStatements();
    for (const queue of [null, "hooks"]) {
      await redriveDeadTasks(db, t.tenantId, { queue, max: 500, actor: "test", horizonMs: 300_000 });
      await discardDeadTasks(db, t.tenantId, { queue, max: 500, actor: "test" });
    }
    expect(statements()).toHaveLength(4);
    for (const [i, statement] of statements().entries()) {
      // Without a queue filter the tenant's dead-letter index; with one, the queue's.
      const index = i < 2 ? "tasks_dead_letter_idx" : "tasks_dead_letter_queue_idx";
      const plan = await explainRecorded(pool(), statement, { analyze: false });
      expect(plan.some((n) => n["Index Name"] === index), JSON.stringify(plan.map((n) => [n["Node Type"], n["Index Name"]]))).toBe(true);
    }
    expect(DEAD_LETTER_STATEMENT_BATCH).toBe(500);
  });

  it("with a queue filter reads the queue's dead tasks, not every dead task of the tenant", async () => {
    const t = await tenant();
    const hooks = await seedPushQueue(platform.database.db, t.tenantId, "hooks", "https://example.com/hooks");
    // An outage of another queue's endpoint an hour ago; hooks' few died a minute ago.
    await seedDead(pool(), t.tenantId, await t.queueId("default"), 3_000);
    await seedDead(pool(), t.tenantId, hooks, 20, { diedSecondsAgo: 60 });
    await pool().query("ANALYZE tasks");
    const { db, statements } = recordBatchStatements();
    await redriveDeadTasks(db, t.tenantId, { queue: "hooks", max: 500, actor: "test", horizonMs: 300_000 });
    await discardDeadTasks(db, t.tenantId, { queue: "hooks", max: 500, actor: "test" });
    // 20 more of hooks' that died before the calls began: what each statement finds when explained.
    await seedDead(pool(), t.tenantId, hooks, 20, { diedSecondsAgo: 45 });
    expect(statements()).toHaveLength(2);
    for (const statement of statements()) {
      // Walking the tenant's dead-letter index for hooks' (the plan enable_sort = off left): 'expected 3020 to be less than 100'.
      expect(rowsRead(await explainRecorded(pool(), statement, { analyze: true }), "tasks")).toBeLessThan(100);
    }
  });
});
