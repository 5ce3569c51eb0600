/**
 * The audit trail through the API (Task.events: every transition with who,
 * from, to, attempt and lease generation, in order, tenant-confined) and the
 * retention job: the scheduler process deletes finished tasks older than
 * TASK_RETENTION_DAYS with their attempts and events, finished workflows and
 * settled deliveries as old, in bounded batches, and nothing else.
 */
import { expireLeases, listTaskAuditEvents, pruneFinished } from "@tasklane/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApp, waitFor, type AppProcess } from "../helpers/app-process.js";
import { freePort } from "../helpers/free-port.js";
import { useGateway } from "../helpers/gateway-fixture.js";
import { createTenant, gql, type CreatedTenant } from "../helpers/platform.js";

interface AuditEvent {
  id: string;
  previousStatus: string | null;
  status: string;
  attempt: number;
  leaseGeneration: number;
  actor: string;
  reason: string | null;
  at: string;
}

const EVENT_FIELDS = "id previousStatus status attempt leaseGeneration actor reason at";

describe("task audit trail and retention", () => {
  const platform = useGateway();
  let a: CreatedTenant;
  let b: CreatedTenant;
  let apiKeyId = "";

  const must = async <T>(query: string, variables: Record<string, unknown>, key: string): Promise<T> => {
    const res = await gql<T>(platform.gateway.url, query, variables, key);
    if (!res.data || res.errors) throw new Error(`${query}: ${JSON.stringify(res.errors)}`);
    return res.data;
  };
  const submit = async (input: Record<string, unknown>) =>
    (await must<{ submitTask: { id: string } }>(`mutation ($i: SubmitTaskInput!) { submitTask(input: $i) { id } }`, { i: input }, a.apiKey)).submitTask.id;
  const lease = async (queue: string, workerId: string, extra = "") => {
    const { leaseTasks } = await must<{ leaseTasks: { leaseToken: string; task: { id: string } }[] }>(
      `mutation ($q: String!, $w: String!) { leaseTasks(queue: $q, workerId: $w${extra}) { leaseToken task { id } } }`,
      { q: queue, w: workerId },
      a.apiKey,
    );
    const first = leaseTasks[0];
    if (!first) throw new Error(`nothing leased from ${queue}`);
    return first;
  };
  const complete = (id: string, token: string) =>
    must(`mutation ($id: ID!, $t: String!) { completeTask(taskId: $id, leaseToken: $t, result: {ok: true}) { id } }`, { id, t: token }, a.apiKey);
  const fail = (id: string, token: string, retryable: boolean) =>
    must(`mutation ($id: ID!, $t: String!, $r: Boolean) { failTask(taskId: $id, leaseToken: $t, error: "boom", retryable: $r) { id } }`, { id, t: token, r: retryable }, a.apiKey);
  const eventsOf = async (id: string, args = "") =>
    (await must<{ task: { events: AuditEvent[] } }>(`query ($id: ID!) { task(id: $id) { events${args} { ${EVENT_FIELDS} } } }`, { id }, a.apiKey)).task.events;

  beforeAll(async () => {
    a = await createTenant(platform.gateway, "audited");
    b = await createTenant(platform.gateway, "other");
    for (const name of ["audit", "ret"]) await must(`mutation ($n: String!) { upsertQueue(input: {name: $n, mode: PULL}) { name } }`, { n: name }, a.apiKey);
    apiKeyId = (await must<{ apiKeys: { id: string }[] }>(`query { apiKeys { id } }`, {}, a.apiKey)).apiKeys[0]!.id;
  });

  describe("Task.events", () => {
    let retried = "";

    beforeAll(async () => {
      retried = await submit({ type: "audit", queue: "audit", maxAttempts: 3, backoff: { strategy: "FIXED", delaySeconds: 0.05 } });
      const first = await lease("audit", "w1");
      await fail(retried, first.leaseToken, true);
      const second = await lease("audit", "w2", ", waitSeconds: 5");
      expect(second.task.id).toBe(retried);
      await complete(retried, second.leaseToken);
    });

    it("lists a retried-then-succeeded task's transitions in order, with actor, attempt and lease generation", async () => {
      const events = await eventsOf(retried);
      expect(events.map(({ previousStatus, status, attempt, leaseGeneration, actor }) => ({ previousStatus, status, attempt, leaseGeneration, actor }))).toEqual([
        { previousStatus: null, status: "QUEUED", attempt: 0, leaseGeneration: 0, actor: `api-key:${apiKeyId}` },
        { previousStatus: "QUEUED", status: "RUNNING", attempt: 1, leaseGeneration: 1, actor: "worker:w1" },
        { previousStatus: "RUNNING", status: "RETRYING", attempt: 1, leaseGeneration: 1, actor: "worker:w1" },
        { previousStatus: "RETRYING", status: "RUNNING", attempt: 2, leaseGeneration: 2, actor: "worker:w2" },
        { previousStatus: "RUNNING", status: "SUCCEEDED", attempt: 2, leaseGeneration: 2, actor: "worker:w2" },
      ]);
      const times = events.map((e) => Date.parse(e.at));
      expect([...times].sort((x, y) => x - y)).toEqual(times);
      expect(new Set(events.map((e) => e.id)).size).toBe(5);
    });

    it("pages with first and after", async () => {
      const all = await eventsOf(retried);
      const head = await eventsOf(retried, "(first: 2)");
      expect(head.map((e) => e.id)).toEqual(all.slice(0, 2).map((e) => e.id));
      const rest = await eventsOf(retried, `(first: 10, after: "${head[1]!.id}")`);
      expect(rest.map((e) => e.id)).toEqual(all.slice(2).map((e) => e.id));
      const bad = await gql(platform.gateway.url, `query ($id: ID!) { task(id: $id) { events(first: 501) { id } } }`, { id: retried }, a.apiKey);
      expect(bad.errors?.[0]?.extensions?.code).toBe("BAD_USER_INPUT");
    });

    it("names lease expiry as the actor when a lease runs out", async () => {
      const id = await submit({ type: "expiring", queue: "audit", maxAttempts: 2 });
      await lease("audit", "w3", ", leaseSeconds: 1");
      await waitFor("the lease to expire", async () => (await expireLeases(platform.database.db, 100, 300_000)).expired > 0, 20_000, 200);
      const last = (await eventsOf(id)).at(-1);
      expect(last).toMatchObject({ previousStatus: "RUNNING", status: "QUEUED", attempt: 1, leaseGeneration: 1, actor: "scheduler:lease-expiry", reason: "lease expired" });
    });

    it("names the API key that triggered a schedule's run", async () => {
      const { createSchedule } = await must<{ createSchedule: { id: string } }>(
        `mutation { createSchedule(input: {name: "audited", cron: "0 0 1 1 *", task: {type: "cron", queue: "audit"}}) { id } }`, {}, a.apiKey);
      const { triggerSchedule } = await must<{ triggerSchedule: { id: string } }>(`mutation ($id: ID!) { triggerSchedule(id: $id) { id } }`, { id: createSchedule.id }, a.apiKey);
      expect((await eventsOf(triggerSchedule.id))[0]).toMatchObject({ previousStatus: null, status: "QUEUED", actor: `api-key:${apiKeyId}` });
    });

    it("is confined to the caller's tenant", async () => {
      const other = await gql<{ task: unknown }>(platform.gateway.url, `query ($id: ID!) { task(id: $id) { events { id } } }`, { id: retried }, b.apiKey);
      expect(other.errors).toBeUndefined();
      expect(other.data?.task).toBeNull();
      const direct = await listTaskAuditEvents(platform.database.db, b.tenantId, [retried], { first: 50 });
      expect(direct.get(retried)).toEqual([]);
    });
  });

  describe("retention", () => {
    const OLD = "now() - interval '40 days'";
    let scheduler: AppProcess | undefined;
    let opsUrl = "";
    const ids: Record<string, string> = {};
    let oldWorkflow = "";
    let runningWorkflow = "";
    const deliveryIds = { oldDelivered: "dlv_retention_old_delivered", oldPending: "dlv_retention_old_pending", newDelivered: "dlv_retention_new_delivered" };
    const db = () => platform.database.db;

    const finish = async (queue: string, type: string) => {
      const id = await submit({ type, queue });
      const l = await lease(queue, "ret-worker");
      expect(l.task.id).toBe(id);
      await complete(id, l.leaseToken);
      return id;
    };
    const age = (table: "tasks" | "workflows", idsToAge: string[]) =>
      db().pool.query(
        table === "tasks"
          ? `UPDATE tasks SET created_at = ${OLD}, run_at = ${OLD}, completed_at = CASE WHEN completed_at IS NULL THEN NULL ELSE ${OLD} END WHERE id = ANY($1)`
          : `UPDATE workflows SET created_at = ${OLD}, completed_at = ${OLD} WHERE id = ANY($1)`,
        [idsToAge],
      );
    const existing = async (table: string, column: string, values: string[]) =>
      new Set((await db().pool.query(`SELECT ${column} AS v FROM ${table} WHERE ${column} = ANY($1)`, [values])).rows.map((r) => r.v as string));

    beforeAll(async () => {
      ids.oldSucceeded = await finish("ret", "old-succeeded");
      ids.oldDead = await submit({ type: "old-dead", queue: "ret", maxAttempts: 1 });
      await fail(ids.oldDead, (await lease("ret", "ret-worker")).leaseToken, false);
      ids.oldCancelled = await submit({ type: "old-cancelled", queue: "ret" });
      await must(`mutation ($id: ID!) { cancelTask(id: $id) { id } }`, { id: ids.oldCancelled }, a.apiKey);
      ids.recentSucceeded = await finish("ret", "recent");

      const workflow = async (tasks: Record<string, unknown>[]) =>
        (await must<{ submitWorkflow: { id: string; tasks: { key: string; task: { id: string } }[] } }>(
          `mutation ($i: SubmitWorkflowInput!) { submitWorkflow(input: $i) { id tasks { key task { id } } } }`,
          { i: { name: "wf", tasks } },
          a.apiKey,
        )).submitWorkflow;
      const done = await workflow([{ key: "only", type: "wf-only", queue: "ret" }]);
      oldWorkflow = done.id;
      ids.oldWorkflowTask = done.tasks[0]!.task.id;
      const l1 = await lease("ret", "ret-worker");
      expect(l1.task.id).toBe(ids.oldWorkflowTask);
      await complete(ids.oldWorkflowTask, l1.leaseToken);
      const open = await workflow([{ key: "a", type: "wf-a", queue: "ret" }, { key: "b", type: "wf-b", queue: "ret", dependsOn: ["a"] }]);
      runningWorkflow = open.id;
      ids.runningWorkflowDone = open.tasks.find((t) => t.key === "a")!.task.id;
      const l2 = await lease("ret", "ret-worker");
      expect(l2.task.id).toBe(ids.runningWorkflowDone);
      await complete(ids.runningWorkflowDone, l2.leaseToken);
      // Submitted last: a QUEUED task in "ret" would be leased before the workflow tasks above.
      ids.oldQueued = await submit({ type: "old-queued", queue: "ret" });

      await age("tasks", [ids.oldSucceeded, ids.oldDead, ids.oldCancelled, ids.oldQueued, ids.oldWorkflowTask, ids.runningWorkflowDone].map(String));
      await age("workflows", [oldWorkflow]);
      const delivery = (id: string, status: string, when: string) =>
        db().pool.query(
          `INSERT INTO webhook_deliveries (id, tenant_id, url, event, task_id, body, status, next_attempt_at, created_at)
           VALUES ($1, $2, 'https://hooks.example.com/x', 'task.succeeded', $3, '{}', $4::"DeliveryStatus", ${when}, ${when})`,
          [id, a.tenantId, ids.oldSucceeded, status],
        );
      await delivery(deliveryIds.oldDelivered, "DELIVERED", OLD);
      await delivery(deliveryIds.oldPending, "PENDING", OLD);
      await delivery(deliveryIds.newDelivered, "DELIVERED", "now()");
    });

    afterAll(async () => {
      await scheduler?.stop();
    });

    const prunable = () => [ids.oldSucceeded, ids.oldDead, ids.oldCancelled, ids.oldWorkflowTask].map(String);
    const kept = () => [ids.recentSucceeded, ids.oldQueued, ids.runningWorkflowDone].map(String);

    let direct = { tasks: 0, attempts: 0, events: 0, workflows: 0, deliveries: 0 };

    it("deletes in bounded batches", async () => {
      const first = await pruneFinished(db(), 30, 2);
      direct = first.pruned;
      expect(first.pruned.tasks).toBe(2);
      expect(first.full).toBe(true);
      expect((await existing("tasks", "id", prunable())).size).toBe(2);
    });

    it("the scheduler prunes only old finished tasks, with their attempts and events, and counts what it removed", async () => {
      // Daily submission counters: days before yesterday go, whatever the retention.
      const tenantId = (await db().pool.query<{ tenant_id: string }>("SELECT tenant_id FROM tasks WHERE id = $1", [ids.recentSucceeded])).rows[0]!.tenant_id;
      const utcDay = (daysAgo: number) => `(now() AT TIME ZONE 'UTC')::date - ${daysAgo}`;
      for (const daysAgo of [40, 2, 1]) {
        await db().pool.query(`INSERT INTO tenant_daily_usage (tenant_id, day, slot, submitted) VALUES ($1, ${utcDay(daysAgo)}, 424242, 7)`, [tenantId]);
      }
      const usageDays = async () =>
        (await db().pool.query<{ ago: number }>(`SELECT ${utcDay(0)} - day AS ago FROM tenant_daily_usage WHERE tenant_id = $1 AND slot = 424242 ORDER BY day`, [tenantId])).rows.map((r) => r.ago);
      expect(await usageDays()).toEqual([40, 2, 1]);
      const port = await freePort();
      opsUrl = `http://127.0.0.1:${port}`;
      scheduler = startApp("scheduler", {
        DATABASE_URL: platform.database.url,
        REDIS_URL: platform.redis.url,
        REDIS_KEY_PREFIX: platform.redis.prefix,
        TASK_RETENTION_DAYS: "30",
        RETENTION_PRUNE_INTERVAL_SECONDS: "1",
        METRICS_PORT: String(port),
        LOG_LEVEL: "warn",
      });
      await waitFor("the scheduler to prune", async () => (await existing("tasks", "id", prunable())).size === 0 && (await existing("workflows", "id", [oldWorkflow])).size === 0
        && (await existing("webhook_deliveries", "id", [deliveryIds.oldDelivered])).size === 0, 30_000, 200);

      expect(await existing("tasks", "id", kept())).toEqual(new Set(kept()));
      expect(await existing("workflows", "id", [runningWorkflow])).toEqual(new Set([runningWorkflow]));
      expect(await existing("webhook_deliveries", "id", [deliveryIds.oldPending, deliveryIds.newDelivered])).toEqual(new Set([deliveryIds.oldPending, deliveryIds.newDelivered]));
      expect((await existing("task_events", "task_id", prunable())).size).toBe(0);
      expect((await existing("task_attempts", "task_id", prunable())).size).toBe(0);
      expect(await existing("task_events", "task_id", kept())).toEqual(new Set(kept()));
      expect(await existing("task_attempts", "task_id", [ids.recentSucceeded, ids.runningWorkflowDone].map(String))).toEqual(
        new Set([ids.recentSucceeded, ids.runningWorkflowDone].map(String)),
      );

      // The first two tasks went in the direct call above; the scheduler removed the other two.
      // It counts a batch once the delete's answer is back, which can be just after the rows read as gone.
      let metrics = "";
      const value = (table: string) => Number(new RegExp(`tasklane_retention_pruned_rows_total\\{[^}]*table="${table}"[^}]*\\} (\\d+)`).exec(metrics)?.[1] ?? "0");
      await waitFor("the pruned rows counted", async () => {
        metrics = await (await fetch(`${opsUrl}/metrics`)).text();
        return value("tasks") >= 2 && value("workflows") + direct.workflows >= 1 && value("deliveries") + direct.deliveries >= 1;
      }, 10_000, 100);
      expect(value("tasks")).toBe(2);
      expect(value("workflows") + direct.workflows).toBe(1);
      expect(value("deliveries") + direct.deliveries).toBe(1);
      expect(value("events")).toBeGreaterThanOrEqual(2);
      expect(await usageDays()).toEqual([1]);
      expect(value("tenant_daily_usage")).toBe(2);
    });
  });
});
