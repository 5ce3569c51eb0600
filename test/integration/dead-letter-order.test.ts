/**
 * deadLetterTasks through the API: the task that died last first, paged by a
 * keyset cursor on (time of death, id) that only this list hands out; and
 * the page read from the dead-letter index, a bounded number of rows however
 * many tasks the tenant has.
 */
import { describe, expect, it } from "vitest";
import { IdPrefix, newId, taskCursor } from "@tasklane/core";
import { listDeadTasks } from "@tasklane/db";
import { useGateway } from "../helpers/gateway-fixture.js";
import { codeOf, createTenant, gql } from "../helpers/platform.js";
import { explainNodes, recordingPool, rowsRead } from "../helpers/query-plans.js";

interface Page {
  nodes: { id: string; type: string; completedAt: string }[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
  totalCount: number;
}

const DEAD = `query ($q: String, $first: Int, $after: String) {
  deadLetterTasks(queue: $q, first: $first, after: $after) { nodes { id type completedAt } pageInfo { hasNextPage endCursor } totalCount }
}`;

describe("deadLetterTasks", () => {
  const platform = useGateway();

  async function tenant() {
    const { apiKey, tenantId } = await createTenant(platform.gateway);
    const api = async <T>(query: string, variables: Record<string, unknown> = {}) => {
      const res = await gql<T>(platform.gateway.url, query, variables, apiKey);
      if (res.errors) throw new Error(JSON.stringify(res.errors));
      return res.data as T;
    };
    const submit = async (type: string) =>
      (await api<{ submitTask: { id: string } }>(`mutation ($t: String!) { submitTask(input: { type: $t, maxAttempts: 1 }) { id } }`, { t: type })).submitTask.id;
    const lease = async (max: number) =>
      (await api<{ leaseTasks: { leaseToken: string; task: { id: string } }[] }>(`mutation ($m: Int) { leaseTasks(queue: "default", workerId: "w", max: $m) { leaseToken task { id } } }`, { m: max }))
        .leaseTasks;
    const fail = (taskId: string, leaseToken: string) =>
      api(`mutation ($id: ID!, $t: String!) { failTask(taskId: $id, leaseToken: $t, error: "boom", retryable: false) { status } }`, { id: taskId, t: leaseToken });
    const dead = async (variables: Record<string, unknown> = {}) => (await api<{ deadLetterTasks: Page }>(DEAD, variables)).deadLetterTasks;
    return { apiKey, tenantId, api, submit, lease, fail, dead };
  }

  it("lists the task that died last first, not the one created last, and pages by time of death", async () => {
    const t = await tenant();
    const older = await t.submit("older");
    const newer = await t.submit("newer");
    const leases = new Map((await t.lease(2)).map((l) => [l.task.id, l.leaseToken]));
    // The newer task dies first, the older one after it.
    await t.fail(newer, leases.get(newer)!);
    await new Promise((r) => setTimeout(r, 5)); // completedAt keeps milliseconds: two deaths, two instants
    await t.fail(older, leases.get(older)!);

    const all = await t.dead();
    expect(all.nodes.map((n) => n.type)).toEqual(["older", "newer"]);
    expect(all.totalCount).toBe(2);
    expect(Date.parse(all.nodes[0]!.completedAt)).toBeGreaterThanOrEqual(Date.parse(all.nodes[1]!.completedAt));

    const first = await t.dead({ first: 1 });
    expect(first.nodes.map((n) => n.id)).toEqual([older]);
    expect(first.pageInfo.hasNextPage).toBe(true);
    const second = await t.dead({ first: 1, after: first.pageInfo.endCursor });
    expect(second.nodes.map((n) => n.id)).toEqual([newer]);
    expect(second.pageInfo.hasNextPage).toBe(false);

    // Redriven and dead again: it died last now, so it comes first.
    await t.api(`mutation ($id: ID!) { redriveTask(id: $id) { id } }`, { id: newer });
    const [again] = await t.lease(1);
    await t.fail(newer, again!.leaseToken);
    expect((await t.dead()).nodes.map((n) => n.type)).toEqual(["newer", "older"]);
    // The cursor handed out before still says where the page ended: after "older", nothing.
    const resumed = await t.dead({ first: 1, after: first.pageInfo.endCursor });
    expect(resumed.nodes).toEqual([]);
  });

  it("refuses a cursor it did not hand out with BAD_USER_INPUT, a task list's cursor included", async () => {
    const t = await tenant();
    for (const after of ["nope", taskCursor.encode(newId(IdPrefix.task)), Buffer.from(`12.${newId(IdPrefix.task)}x`).toString("base64url"), Buffer.from(`012.${newId(IdPrefix.task)}`).toString("base64url")]) {
      const res = await gql(platform.gateway.url, DEAD, { after }, t.apiKey);
      expect(codeOf(res), after).toBe("BAD_USER_INPUT");
    }
  });

  it("reads a page from the dead-letter index: a bounded number of rows among 20,000 tasks", async () => {
    const t = await tenant();
    const pool = platform.database.db.pool;
    const queue = await pool.query<{ id: string }>("SELECT id FROM queues WHERE tenant_id = $1 AND name = 'default'", [t.tenantId]);
    // 20,000 tasks, one in ten DEAD, each died at its own time in an order unlike their ids'.
    await pool.query(
      `INSERT INTO tasks (id, tenant_id, queue_id, type, status, run_at, created_at, completed_at, attempts, max_attempts,
                          backoff_strategy, backoff_delay_seconds, backoff_jitter, timeout_seconds)
       SELECT id, $1, $2, 'bulk',
              CASE WHEN n % 10 = 0 THEN 'DEAD'::"TaskStatus" ELSE 'SUCCEEDED'::"TaskStatus" END,
              now() - interval '3 hours', now() - interval '3 hours', now() - ((n * 7919) % 20000) * interval '1 second', 1, 1, 'EXPONENTIAL', 1, true, 60
         FROM unnest($3::text[]) WITH ORDINALITY AS u(id, n)`,
      [t.tenantId, queue.rows[0]!.id, Array.from({ length: 20_000 }, () => newId(IdPrefix.task))],
    );
    await pool.query("ANALYZE tasks");
    const recording = recordingPool(pool);
    const first = await listDeadTasks({ pool: recording as never }, t.tenantId, null, { first: 50 });
    const deep = await listDeadTasks({ pool: recording as never }, t.tenantId, "default", { first: 50, after: first.endCursor });
    expect(first.nodes).toHaveLength(50);
    expect(deep.nodes).toHaveLength(50);
    const times = [...first.nodes, ...deep.nodes].map((n) => n.completedAt!.getTime());
    expect(times).toEqual([...times].sort((a, b) => b - a));
    for (const { text, values } of recording.statements.filter((s) => s.text.includes("ORDER BY t.completed_at DESC"))) {
      const plan = await explainNodes(pool, text, values);
      // The tenant's dead-letter index, or the queue's (tasks_dead_letter_queue_idx) for a page of one queue.
      expect(plan.some((n) => /^tasks_dead_letter(_queue)?_idx$/.test(n["Index Name"] ?? "")), JSON.stringify(plan.map((n) => n["Node Type"]))).toBe(true);
      expect(rowsRead(plan, "tasks")).toBeLessThanOrEqual(60);
    }
  });
});
