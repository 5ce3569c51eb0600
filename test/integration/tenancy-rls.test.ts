/**
 * Row-level security (migration tenant_rls), the pending counters that
 * back maxPendingTasks and Tenant.usage (migration tenant_counters) and the
 * per-queue status counters behind queue statistics (migration queue_counters).
 */
import { normalizeTaskSpec, parseInput, submitTaskInputSchema, type SubmitTaskInput } from "@tasklane/core";
import {
  TENANT_ROLE,
  cancelTask,
  completeAttempts,
  expireLeases,
  failAttempt,
  foldPendingCounters,
  foldQueueCounters,
  pendingTaskCounts,
  queueStatusCounts,
  promoteDueTasks,
  redriveTask,
  startAttemptsFromQueue,
  submitTasks,
  totalPendingTasks,
  withTenantScope,
  type Database,
} from "@tasklane/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedTenant } from "../helpers/seed.js";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";

const HORIZON = 300_000;
let tdb: TestDatabase;
let db: Database;

beforeAll(async () => {
  tdb = await createTestDatabase("rls");
  db = tdb.db;
});
afterAll(async () => tdb?.drop());

const spec = (input: Partial<SubmitTaskInput> & { type: string }) => normalizeTaskSpec(parseInput(submitTaskInputSchema, input), Date.now());

async function tablesWithTenantId(): Promise<string[]> {
  const res = await db.pool.query<{ table_name: string }>(
    `SELECT c.table_name FROM information_schema.columns c
       JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
      WHERE c.table_schema = current_schema() AND c.column_name = 'tenant_id' AND t.table_type = 'BASE TABLE'
      ORDER BY 1`,
  );
  return res.rows.map((r) => r.table_name);
}

describe("row-level security", () => {
  it("covers every table with a tenant_id column: enabled, forced, with the tenant policy", async () => {
    const tables = await tablesWithTenantId();
    expect(tables).toEqual(expect.arrayContaining(["tasks", "queues", "api_keys", "tenant_counters", "queue_counters"]));
    const res = await db.pool.query<{ relname: string; enabled: boolean; forced: boolean; policy: string | null }>(
      `SELECT c.relname, c.relrowsecurity AS enabled, c.relforcerowsecurity AS forced,
              (SELECT p.qual FROM pg_policies p
                WHERE p.schemaname = current_schema() AND p.tablename = c.relname
                  AND p.policyname = 'tenant_isolation' AND p.permissive = 'RESTRICTIVE') AS policy
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = current_schema() AND c.relname = ANY($1::text[])`,
      [[...tables, "tenants"]],
    );
    const uncovered = res.rows
      .filter((r) => !r.enabled || !r.forced || r.policy === null || !r.policy.includes("app.tenant_id") || !r.policy.includes(TENANT_ROLE))
      .map((r) => r.relname);
    // A table listed here needs `SELECT tasklane_enable_tenant_rls('<table>')` in its migration.
    expect(uncovered).toEqual([]);
    expect(res.rows).toHaveLength(tables.length + 1);
  });

  it("gives the app role no way around the policies", async () => {
    const role = await db.pool.query<{ rolsuper: boolean; rolbypassrls: boolean; rolcanlogin: boolean }>(
      "SELECT rolsuper, rolbypassrls, rolcanlogin FROM pg_roles WHERE rolname = $1",
      [TENANT_ROLE],
    );
    expect(role.rows[0]).toEqual({ rolsuper: false, rolbypassrls: false, rolcanlogin: false });
    const owners = await db.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = current_schema() AND tableowner = $1",
      [TENANT_ROLE],
    );
    expect(owners.rows[0]?.n).toBe(0);
  });

  it("as tasklane_app for tenant A, B's rows are invisible and cannot be written", async () => {
    const a = await seedTenant(db);
    const b = await seedTenant(db);
    await submitTasks(db, a.tenantId, [spec({ type: "a" })], { horizonMs: HORIZON });
    const [bTask] = (await submitTasks(db, b.tenantId, [spec({ type: "b" })], { horizonMs: HORIZON })).tasks;
    const seen = await withTenantScope(db.pool, a.tenantId, async (client) => {
      const who = await client.query<{ role: string }>("SELECT current_user AS role");
      expect(who.rows[0]?.role).toBe(TENANT_ROLE);
      const counts: Record<string, number> = {};
      for (const table of await tablesWithTenantId()) {
        // No tenant filter on purpose: the policy alone must hide B.
        const res = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${table}" WHERE tenant_id = $1`, [b.tenantId]);
        counts[table] = res.rows[0]?.n ?? -1;
      }
      const tenants = await client.query<{ id: string }>("SELECT id FROM tenants");
      const tasks = await client.query<{ tenant_id: string }>("SELECT tenant_id FROM tasks");
      const update = await client.query("UPDATE tasks SET priority = 'HIGH' WHERE id = $1", [bTask?.id]);
      return { counts, tenants: tenants.rows.map((r) => r.id), taskTenants: [...new Set(tasks.rows.map((r) => r.tenant_id))], updated: update.rowCount };
    });
    expect(Object.values(seen.counts).every((n) => n === 0)).toBe(true);
    expect(seen.tenants).toEqual([a.tenantId]);
    expect(seen.taskTenants).toEqual([a.tenantId]);
    expect(seen.updated).toBe(0);
    await expect(
      withTenantScope(db.pool, a.tenantId, (client) =>
        client.query("INSERT INTO queues (id, tenant_id, name, mode) VALUES ('que_x', $1, 'sneaky', 'PULL')", [b.tenantId]),
      ),
    ).rejects.toThrow(/row-level security/);
    // The settings were LOCAL: the pooled connections are back to the platform's role, unconfined.
    const after = await db.pool.query<{ role: string; n: number }>("SELECT current_user AS role, (SELECT count(*)::int FROM tenants) AS n");
    expect(after.rows[0]?.role).not.toBe(TENANT_ROLE);
    expect(after.rows[0]?.n).toBeGreaterThanOrEqual(2);
  });
});

  it("refuses a task whose tenant is not its queue's, even from the platform's unconfined role", async () => {
    const a = await seedTenant(db);
    const b = await seedTenant(db);
    const insert = (tenantId: string, queueId: string) =>
      db.pool.query(
        `INSERT INTO tasks (id, tenant_id, queue_id, type, status, run_at, max_attempts, backoff_strategy, backoff_delay_seconds, backoff_jitter, timeout_seconds)
         VALUES ('task_' || replace(gen_random_uuid()::text, '-', ''), $1, $2, 't', 'QUEUED', now(), 3, 'EXPONENTIAL', 1, false, 30)`,
        [tenantId, queueId],
      );
    await expect(insert(a.tenantId, b.defaultQueueId)).rejects.toThrow(/tasks_tenant_id_queue_id_fkey/);
    await expect(insert(a.tenantId, "que_missing")).rejects.toThrow(/tasks_tenant_id_queue_id_fkey/);
    await insert(a.tenantId, a.defaultQueueId);
    const rows = await db.pool.query<{ tenant_id: string; n: number }>(
      "SELECT tenant_id, count(*)::int AS n FROM tasks WHERE tenant_id = ANY($1::text[]) GROUP BY tenant_id",
      [[a.tenantId, b.tenantId]],
    );
    expect(rows.rows).toEqual([{ tenant_id: a.tenantId, n: 1 }]);
  });

describe("pending counters", () => {
  /** Checks both counters against the tasks themselves; answers the tenant's pending count. */
  async function expectExact(tenantId: string): Promise<number> {
    const counted = await db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM tasks WHERE tenant_id = $1 AND status IN ('SCHEDULED', 'QUEUED', 'RETRYING', 'BLOCKED')`,
      [tenantId],
    );
    const kept = (await pendingTaskCounts(db.pool, [tenantId])).get(tenantId);
    expect(kept).toBe(counted.rows[0]?.n);
    const queueIds = (await db.pool.query<{ id: string }>("SELECT id FROM queues WHERE tenant_id = $1", [tenantId])).rows.map((r) => r.id);
    const byStatus = await db.pool.query<{ queue_id: string; status: string; n: number }>(
      "SELECT queue_id, status::text, count(*)::int AS n FROM tasks WHERE tenant_id = $1 GROUP BY queue_id, status",
      [tenantId],
    );
    const sortKey = (r: { queueId: string; status: string }) => `${r.queueId} ${r.status}`;
    const expected = byStatus.rows.map((r) => ({ queueId: r.queue_id, status: r.status, tasks: r.n })).sort((a, b) => sortKey(a).localeCompare(sortKey(b)));
    const perQueue = (await queueStatusCounts(db.pool, queueIds)).sort((a, b) => sortKey(a).localeCompare(sortKey(b)));
    expect(perQueue).toEqual(expected);
    return kept ?? -1;
  }

  it("stay exact through every transition, concurrent submissions and folding", async () => {
    const { tenantId, defaultQueueId } = await seedTenant(db);
    const lease = async (leaseMs = 30_000) => (await startAttemptsFromQueue(db, defaultQueueId, 1, 60, { workerId: "w", leaseMs, actor: "t" }))[0]!;

    const { tasks } = await submitTasks(
      db,
      tenantId,
      [...Array.from({ length: 5 }, (_, i) => spec({ type: `now${i}` })), spec({ type: "later", delaySeconds: 3600 }), spec({ type: "once", maxAttempts: 1 })],
      { horizonMs: HORIZON },
    );
    expect(await expectExact(tenantId)).toBe(7);
    const l1 = await lease();
    const l2 = await lease();
    expect(await expectExact(tenantId)).toBe(5);
    await failAttempt(db, { taskId: l1.task.id, leaseGeneration: l1.task.leaseGeneration, error: "x", outcome: "FAILED", decision: { kind: "retry", delayMs: 0 } }, "w", HORIZON);
    await completeAttempts(db, [{ taskId: l2.task.id, leaseGeneration: l2.task.leaseGeneration, result: null }], "w");
    expect(await expectExact(tenantId)).toBe(6);
    await cancelTask(db, tenantId, tasks[5]!.id, "t");
    expect(await expectExact(tenantId)).toBe(5);
    await promoteDueTasks(db, 100);
    const short = await lease(1);
    await new Promise((r) => setTimeout(r, 20));
    await expireLeases(db, 100, HORIZON);
    expect((await db.pool.query("SELECT status FROM tasks WHERE id = $1", [short.task.id])).rows[0]?.status).toBe("QUEUED");
    expect(await expectExact(tenantId)).toBe(5);
    // Drain to DEAD, then redrive one back.
    for (let i = 0; i < 5; i++) {
      const l = await lease();
      await failAttempt(db, { taskId: l.task.id, leaseGeneration: l.task.leaseGeneration, error: "x", outcome: "FAILED", decision: { kind: "dead", reason: "non_retryable" } }, "w", HORIZON);
    }
    expect(await expectExact(tenantId)).toBe(0);
    await redriveTask(db, tenantId, tasks[6]!.id, "t", HORIZON);
    expect(await expectExact(tenantId)).toBe(1);

    await Promise.all(Array.from({ length: 20 }, (_, i) => submitTasks(db, tenantId, [spec({ type: `c${i}` }), spec({ type: `d${i}` })], { horizonMs: HORIZON })));
    expect(await expectExact(tenantId)).toBe(41);
    const total = await totalPendingTasks(db.pool);
    expect((await db.pool.query("SELECT 1 FROM queue_counters WHERE queue_id = $1 AND slot <> 0", [defaultQueueId])).rowCount).toBeGreaterThan(0);
    await foldPendingCounters(db.pool);
    await foldQueueCounters(db.pool);
    expect(await totalPendingTasks(db.pool)).toBe(total);
    const slots = await db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM tenant_counters WHERE tenant_id = $1 AND slot <> 0", [tenantId]);
    expect(slots.rows[0]?.n).toBe(0);
    const queueSlots = await db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM queue_counters WHERE queue_id = $1 AND slot <> 0", [defaultQueueId]);
    expect(queueSlots.rows[0]?.n).toBe(0);
    expect(await expectExact(tenantId)).toBe(41);
  });

  it("follow deletions: a queue's tasks, finished tasks, and the tenant itself", async () => {
    const { tenantId, defaultQueueId } = await seedTenant(db);
    await db.pool.query("INSERT INTO queues (id, tenant_id, name, mode) VALUES ('que_gone_' || $1, $1, 'gone', 'PULL')", [tenantId]);
    await submitTasks(db, tenantId, [spec({ type: "a", queue: "gone" }), spec({ type: "b" })], { horizonMs: HORIZON });
    expect(await expectExact(tenantId)).toBe(2);
    await db.pool.query("DELETE FROM queues WHERE tenant_id = $1 AND name = 'gone'", [tenantId]);
    expect(await expectExact(tenantId)).toBe(1);
    const goneQueue = await db.pool.query("SELECT 1 FROM queue_counters WHERE queue_id = 'que_gone_' || $1", [tenantId]);
    expect(goneQueue.rowCount).toBe(0);
    // Retention deletes finished tasks: their counts go with them.
    const [leased] = await startAttemptsFromQueue(db, defaultQueueId, 1, 60, { workerId: "w", leaseMs: 30_000, actor: "t" });
    await completeAttempts(db, [{ taskId: leased!.task.id, leaseGeneration: leased!.task.leaseGeneration, result: null }], "w");
    expect(await expectExact(tenantId)).toBe(0);
    await db.pool.query("DELETE FROM tasks WHERE id = $1", [leased!.task.id]);
    expect(await expectExact(tenantId)).toBe(0);
    await db.pool.query("DELETE FROM tenants WHERE id = $1", [tenantId]);
    const left = await db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM tenant_counters WHERE tenant_id = $1", [tenantId]);
    expect(left.rows[0]?.n).toBe(0);
    const leftPerQueue = await db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM queue_counters WHERE tenant_id = $1", [tenantId]);
    expect(leftPerQueue.rows[0]?.n).toBe(0);
  });
});
