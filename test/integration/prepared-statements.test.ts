/**
 * The hot path's statements are named prepared statements (database.ts,
 * prepared): each connection parses them once, and after a few executions
 * Postgres's plan cache settles on a generic plan, so a lease or completion
 * no longer pays for planning every time. Checked on a real connection
 * through pg_prepared_statements, and the plan it settles on through EXPLAIN.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { completeAttempts, completeAttemptsQuietly, completeLeasedPlainTasks, createDatabase, deleteOutboxRows, leaseFromPullQueue, prepared, readPullQueue, withTransactionIfAny, startAttemptsByIds, submitTasks, type Database, type PushTaskRecord, type StartedAttempt } from "@tasklane/db";
import { normalizeTaskSpec, parseInput, submitTaskInputSchema } from "@tasklane/core";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";
import { explainNodes, rowsRead, type PlanNode } from "../helpers/query-plans.js";
import { seedFinishedTasks, seedPushQueue, seedTenant } from "../helpers/seed.js";

let t: TestDatabase;
/** One connection, so every statement below runs in the session it inspects. */
let single: Database;

beforeAll(async () => {
  t = await createTestDatabase("prep");
  single = createDatabase({ url: t.url, max: 1, applicationName: "tasklane-test" });
});

afterAll(async () => {
  await single?.close();
  await t?.drop();
});

interface PreparedRow {
  name: string;
  statement: string;
  generic_plans: string;
  custom_plans: string;
}

const preparedStatements = async () => (await single.pool.query<PreparedRow>("SELECT name, statement, generic_plans, custom_plans FROM pg_prepared_statements")).rows;

describe("prepared", () => {
  it("names a text by its digest: the same text the same name, another text another", () => {
    const a = prepared("SELECT $1::int", [1]);
    expect(a).toEqual({ name: expect.stringMatching(/^tl_[0-9a-f]{24}$/), text: "SELECT $1::int", values: [1] });
    expect(prepared("SELECT $1::int", [2]).name).toBe(a.name);
    expect(prepared("SELECT $1::int + 1", [2]).name).not.toBe(a.name);
  });

  it("lets a connection prepare a lease statement once and then reuse a generic plan", async () => {
    const { tenantId } = await seedTenant(t.db);
    const spec = normalizeTaskSpec(parseInput(submitTaskInputSchema, { type: "t" }), Date.now());
    await submitTasks(t.db, tenantId, Array.from({ length: 12 }, () => spec), { horizonMs: 60_000 });
    for (let i = 0; i < 12; i++) {
      const leased = await leaseFromPullQueue(single, tenantId, await readPullQueue(single, tenantId, "default"), { queue: "default", workerId: "w", max: 1, leaseSeconds: 30, agingSeconds: 60 });
      expect(leased).toHaveLength(1);
    }
    const lease = (await preparedStatements()).filter((s) => s.statement.includes("lease_expires_at") && s.statement.includes("row_number() OVER (ORDER BY"));
    expect(lease).toHaveLength(1);
    // The plan cache tries five custom plans before it compares them with a generic one.
    expect(Number(lease[0]!.generic_plans)).toBeGreaterThan(0);
    expect(Number(lease[0]!.generic_plans) + Number(lease[0]!.custom_plans)).toBe(12);
  });

  it("deletes a submission's outbox row after its fast dispatch with a statement it plans once, not per call", async () => {
    const { tenantId } = await seedTenant(t.db);
    await seedPushQueue(t.db, tenantId, "push", "http://127.0.0.1:9/");
    const spec = normalizeTaskSpec(parseInput(submitTaskInputSchema, { type: "t", queue: "push" }), Date.now());
    for (let i = 0; i < 8; i++) {
      const { dispatch } = await submitTasks(t.db, tenantId, [spec], { horizonMs: 60_000 });
      const ids = dispatch.flatMap((d) => (d.outboxId ? [d.outboxId] : []));
      expect(ids).toHaveLength(1);
      await deleteOutboxRows(single, ids);
      expect((await t.db.pool.query("SELECT 1 FROM outbox WHERE id = ANY($1::bigint[])", [ids])).rowCount).toBe(0);
    }
    const deletes = (await preparedStatements()).filter((s) => s.statement.startsWith("DELETE FROM outbox"));
    expect(deletes).toHaveLength(1);
    expect(Number(deletes[0]!.generic_plans)).toBeGreaterThan(0);
    // Rows of two statements at once (a caller that gathered dispatches) go in one statement too.
    const two = await Promise.all([0, 1].map(() => submitTasks(t.db, tenantId, [spec], { horizonMs: 60_000 })));
    const twoIds = two.flatMap(({ dispatch }) => dispatch.flatMap((d) => (d.outboxId ? [d.outboxId] : [])));
    expect(new Set(twoIds).size).toBe(2);
    await deleteOutboxRows(single, twoIds);
    expect((await t.db.pool.query("SELECT 1 FROM outbox WHERE id = ANY($1::bigint[])", [twoIds])).rowCount).toBe(0);
  });
});

describe("plans cached while tasks was small", () => {
  /** The nodes of the plan `name` runs with these arguments (EXECUTE takes literals, not bind parameters). */
  async function planOf(name: string, args: string): Promise<PlanNode[]> {
    return explainNodes(single.pool, `EXECUTE ${name}(${args})`, [], { analyze: false });
  }
  const list = (values: (string | number)[], type: string) => `ARRAY[${values.map((v) => (typeof v === "number" ? v : `'${v}'`)).join(",")}]::${type}[]`;

  it("still find the started and completed tasks by primary key after the table has grown 12-fold", async () => {
    const { tenantId } = await seedTenant(t.db);
    const spec = normalizeTaskSpec(parseInput(submitTaskInputSchema, { type: "t" }), Date.now() - 1_000);
    const small = (await submitTasks(t.db, tenantId, Array.from({ length: 360 }, () => spec), { horizonMs: 60_000 })).tasks;
    // Cached while the table holds a few hundred rows, as on a fresh install: six calls of each,
    // as the plan cache tries five custom plans before it settles on a generic one.
    const started: StartedAttempt<PushTaskRecord>[] = [];
    for (let i = 0; i < 9; i++) {
      const ids = small.slice(i * 40, (i + 1) * 40).map((task) => task.id);
      started.push(...(await startAttemptsByIds(single, ids, { workerId: "w", leaseMs: 30_000, actor: "test" })));
    }
    expect(started).toHaveLength(360);
    // The API's completion (answers with the tasks) and the PUSH worker's (answers with ids).
    const batch = (from: number) => started.slice(from, from + 20).map((a) => ({ taskId: a.task.id, leaseGeneration: a.task.leaseGeneration, result: null, workflowId: null }));
    for (let i = 0; i < 6; i++) {
      expect((await completeAttempts(single, batch(i * 40), "test")).accepted).toHaveLength(20);
      expect((await completeAttemptsQuietly(single, batch(i * 40 + 20), "test")).refused).toEqual([]);
    }
    // A PULL worker's completeTasks, fenced by lease tokens, with and without the tasks in the answer.
    const leased = (from: number) => started.slice(from, from + 10).map((a) => ({ taskId: a.task.id, token: a.leaseToken, result: null }));
    for (let i = 0; i < 6; i++) {
      expect((await completeLeasedPlainTasks(single, tenantId, leased(240 + i * 20), true)).accepted).toHaveLength(10);
      expect((await completeLeasedPlainTasks(single, tenantId, leased(250 + i * 20), false)).ids).toHaveLength(10);
    }
    const statements = await preparedStatements();
    const start = statements.find((s) => s.statement.includes("lease_token = 'lt_'") && s.statement.includes("unnest($1::text[], $2::text[])"));
    const lean = statements.filter((s) => s.statement.includes("status = 'SUCCEEDED'") && s.statement.includes("ordering_key IS NULL"));
    const complete = lean.find((s) => !s.statement.includes("SELECT upd.id FROM upd"));
    const quiet = lean.find((s) => s.statement.includes("SELECT upd.id FROM upd") && !s.statement.includes("u(id, token, result)"));
    const byToken = statements.filter((s) => s.statement.includes("u(id, token, result)"));
    const leasedComplete = byToken.find((s) => !s.statement.includes("SELECT upd.id FROM upd"));
    const leasedQuiet = byToken.find((s) => s.statement.includes("SELECT upd.id FROM upd"));
    for (const statement of [start, complete, quiet, leasedComplete, leasedQuiet]) expect(Number(statement?.generic_plans)).toBeGreaterThan(0);

    const grown: string[] = [];
    for (let i = 0; i < 8; i++) {
      grown.push(...(await submitTasks(t.db, tenantId, Array.from({ length: 500 }, () => spec), { horizonMs: 60_000 })).tasks.map((task) => task.id));
    }
    // The ids are our own (task_ and hex), safe as literals.
    const toStart = grown.slice(0, 50).sort();
    const toComplete = started.slice(180, 240);
    expect([...toStart, ...toComplete.map((a) => a.task.id)].every((id) => /^task_[0-9a-f]+$/.test(id))).toBe(true);
    expect([...toComplete.map((a) => a.leaseToken), tenantId].every((text) => /^[A-Za-z0-9_-]+$/.test(text))).toBe(true);
    const startPlan = await planOf(start!.name, `${list(toStart, "text")}, ${list(toStart.map(() => "r"), "text")}, 0, 30000, 'w', 'test', 0`);
    const completionArgs = `${list(toComplete.map((a) => a.task.id), "text")}, ${list(toComplete.map((a) => a.task.leaseGeneration), "int")}, ${list(toComplete.map(() => "null"), "text")}, 'test'`;
    const completePlan = await planOf(complete!.name, completionArgs);
    const quietPlan = await planOf(quiet!.name, completionArgs);
    const leasedArgs = `${list(toComplete.map((a) => a.task.id), "text")}, ${list(toComplete.map((a) => a.leaseToken), "text")}, ${list(toComplete.map(() => "null"), "text")}, '${tenantId}'`;
    const leasedPlans = [await planOf(leasedComplete!.name, leasedArgs), await planOf(leasedQuiet!.name, leasedArgs)];
    for (const plan of [startPlan, completePlan, quietPlan, ...leasedPlans]) {
      // The lock probe and the update each find a task by a primary-key probe (also where the
      // statement names the tenant too), never by a walk over the table, over the tenant's tasks of
      // a status or over a partial index (the waiting tasks' lanes, the RUNNING tasks' lease expiries).
      const indexes = plan.map((n) => n["Index Name"]).filter((name) => name !== undefined);
      expect(plan.filter((n) => n["Relation Name"] === "tasks" && n["Node Type"] === "Seq Scan")).toEqual([]);
      expect(indexes.filter((name) => name === "tasks_pkey").length).toBeGreaterThanOrEqual(2);
      expect(indexes).not.toContain("tasks_tenant_id_status_id_idx");
      expect(indexes).not.toContain("tasks_runnable_lane_idx");
      expect(indexes).not.toContain("tasks_lease_expires_at_running_idx");
      // One row per candidate (at most 50 here), not a guessed share of the table: inflated
      // estimates pushed plans past the JIT threshold.
      const update = plan.find((n) => n["Node Type"] === "ModifyTable" && n["Relation Name"] === "tasks");
      expect(update?.["Plan Rows"]).toBeLessThanOrEqual(50);
    }
    for (const plan of [completePlan, quietPlan, ...leasedPlans]) {
      // Each ended attempt is the newest on its task, found by a backward probe of (task_id, id).
      // Filtered by its lease token inside the probe, the planner took the statistics-less guess of
      // ~16 attempts per task and chose a bitmap scan and a sort, each rescan of which sizes the
      // table with a system call: once per completed task.
      const byTask = plan.filter((n) => n["Index Name"] === "task_attempts_task_id_id_idx").map((n) => n["Node Type"]);
      expect(byTask).toEqual(["Index Scan"]);
    }
  });
});

describe("a lease statement cached while tasks was small", () => {
  it("still walks only the queue's waiting lanes once the queue holds 20,000 finished tasks", async () => {
    // Its own database and connection, so the statement is planned here, on a fresh install in a
    // worker's steady state: batches of 500 submitted, leased 100 at a time and completed.
    const fresh = await createTestDatabase("preplanes");
    const { tenantId, defaultQueueId } = await seedTenant(fresh.db);
    const spec = normalizeTaskSpec(parseInput(submitTaskInputSchema, { type: "t" }), Date.now() - 1_000);
    const own = createDatabase({ url: fresh.url, max: 1, applicationName: "tasklane-test" });
    const lease = async () => {
      const queue = await readPullQueue(own, tenantId, "default");
      const leased = await leaseFromPullQueue(own, tenantId, queue, { queue: "default", workerId: "w", max: 100, leaseSeconds: 30, agingSeconds: 60 });
      const done = await completeLeasedPlainTasks(own, tenantId, leased.map((a) => ({ taskId: a.task.id, token: a.leaseToken, result: null })), false);
      expect(done.ids).toHaveLength(100);
    };
    let plan: PlanNode[];
    try {
      for (let round = 0; round < 2; round++) {
        await submitTasks(fresh.db, tenantId, Array.from({ length: 500 }, () => spec), { horizonMs: 60_000 });
        for (let i = 0; i < 5; i++) await lease();
      }
      const ownStatements = (await own.pool.query<PreparedRow>("SELECT name, statement, generic_plans, custom_plans FROM pg_prepared_statements")).rows;
      const statement = ownStatements.find((s) => s.statement.includes("lease_expires_at") && s.statement.includes("row_number() OVER (ORDER BY"));
      expect(Number(statement?.generic_plans)).toBeGreaterThan(0);

      await seedFinishedTasks(fresh.db.pool, tenantId, defaultQueueId, 20_000);
      await submitTasks(fresh.db, tenantId, Array.from({ length: 150 }, () => spec), { horizonMs: 60_000 });
      // EXPLAIN ANALYZE runs the statement: it leases, so it runs in a transaction rolled back after.
      const client = await own.pool.connect();
      try {
        await client.query("BEGIN");
        const rands = Array.from({ length: 100 }, (_, i) => `'r${i}'`).join(",");
        plan = await explainNodes(client, `EXECUTE ${statement!.name}('${defaultQueueId}', 100, 60, 'w', 'worker:w', ARRAY[${rands}]::text[], 30000, 0, NULL)`);
      } finally {
        await client.query("ROLLBACK");
        client.release();
      }
    } finally {
      await own.close();
      await fresh.drop();
    }
    const update = plan.find((n) => n["Node Type"] === "ModifyTable" && n["Relation Name"] === "tasks");
    expect(update?.["Actual Rows"]).toBe(100);
    // Three lanes of at most 100 waiting tasks each; a walk over the queue's
    // finished tasks would have read (and filtered out) all 20,000 of them.
    const read = rowsRead(plan, "tasks");
    expect(read).toBeLessThan(1_000);
    expect(plan.map((n) => n["Index Name"])).toContain("tasks_runnable_lane_idx");
  }, 60_000);
});

describe("session settings", () => {
  const settingsOf = async (url: string) => {
    const db = createDatabase({ url, max: 1, applicationName: "tasklane-test" });
    try {
      return (
        await db.pool.query(
          "SELECT current_setting('random_page_cost') AS rpc, current_setting('jit') AS jit, current_setting('statement_timeout') AS st, current_setting('idle_in_transaction_session_timeout') AS idle",
        )
      ).rows[0];
    } finally {
      await db.close();
    }
  };

  it("apply to every pooled session; options in DATABASE_URL come after them, so they add to them or override them", async () => {
    // A process frozen inside a transaction gives its locks up after 10 s (database.ts).
    expect(await settingsOf(t.url)).toEqual({ rpc: "1.1", jit: "off", st: "0", idle: "10s" });
    const withOptions = new URL(t.url);
    withOptions.searchParams.set("options", "-c statement_timeout=1234 -c random_page_cost=2");
    expect(await settingsOf(withOptions.toString())).toEqual({ rpc: "2", jit: "off", st: "1234ms", idle: "10s" });
  });
});

describe("withTransactionIfAny", () => {
  const inTransaction = async (client: { query: Database["pool"]["query"] }) =>
    (await client.query<{ open: boolean }>("SELECT xact_start < statement_timestamp() AS open FROM pg_stat_activity WHERE pid = pg_backend_pid()")).rows[0]?.open;

  it("answers the idle value without opening a transaction when the probe finds nothing", async () => {
    const queries = vi.spyOn(pg.Client.prototype, "query");
    try {
      let ran = false;
      const result = await withTransactionIfAny(single.pool, prepared("SELECT 1 WHERE $1::boolean", [false]), "idle", async () => {
        ran = true;
        return "work";
      });
      expect(result).toBe("idle");
      expect(ran).toBe(false);
      // The probe was the only statement sent.
      expect(queries).toHaveBeenCalledTimes(1);
      expect(queries.mock.calls.flat()).not.toContain("BEGIN");
    } finally {
      queries.mockRestore();
    }
  });

  it("runs the work in one transaction when the probe finds a row", async () => {
    const result = await withTransactionIfAny(single.pool, prepared("SELECT 1 WHERE $1::boolean", [true]), null, async (client) => {
      await client.query("SELECT pg_sleep(0.01)");
      return inTransaction(client);
    });
    expect(result).toBe(true);
  });
});
