/**
 * Fairness between tenants at the gateway (QA t10): one tenant's heavy reads,
 * far below its API rate, held every pool connection and slowed every other
 * tenant's calls ~80x. Each tenant now runs at most its share of the pool at
 * once (limits/tenant-concurrency.ts); its further operations wait their turn
 * or are refused RATE_LIMITED, never INTERNAL.
 */
import { describe, expect, it } from "vitest";
import { createClient } from "graphql-ws";
import WebSocket from "ws";
import { useGateway } from "../helpers/gateway-fixture.js";
import { httpToWs } from "../helpers/graphql-ws-client.js";
import { codeOf, createTenant, gql, waitFor } from "../helpers/platform.js";
import { seedFinishedTasks } from "../helpers/seed.js";
import { NotFoundError } from "@tasklane/core";
import type { TaskService } from "@tasklane/gateway/services/task-service";

const HEAVY_LOOPS = 16;
const TASK = `query ($id: ID!) { task(id: $id) { id } }`;
const SOME_TASK_ID = "task_0190f0f0f0f07000800000000000000a";
const HEAVY_READ = `query($a: String) { tasks(first: 500, after: $a) { totalCount pageInfo { endCursor hasNextPage } nodes { id payload result status attempts } } }`;

const median = (values: number[]) => {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[sorted.length >> 1] ?? Number.NaN;
};

describe("per-tenant concurrency at the gateway", () => {
  const platform = useGateway();

  it("keeps a neighbour's calls fast while one tenant runs 16 concurrent heavy reads over 50,000 tasks", async () => {
    const url = platform.gateway.url;
    const a = await createTenant(platform.gateway, "heavy-reader");
    const b = await createTenant(platform.gateway, "neighbour");
    const pool = platform.database.db.pool;
    const queue = await pool.query<{ id: string }>("SELECT id FROM queues WHERE tenant_id = $1 LIMIT 1", [a.tenantId]);
    const queueId = queue.rows[0]?.id;
    if (queueId === undefined) throw new Error("tenant A has no queue");
    await seedFinishedTasks(pool, a.tenantId, queueId, 50_000);
    // QA's tasks carried payloads and results: the reads move ~0.5 MB each.
    await pool.query(`UPDATE tasks SET payload = jsonb_build_object('blob', repeat('p', 400)), result = jsonb_build_object('ok', repeat('r', 200)) WHERE tenant_id = $1`, [a.tenantId]);
    await pool.query("ANALYZE tasks");

    const bOnce = async () => {
      const started = performance.now();
      const submitted = await gql<{ submitTask: { id: string } }>(url, `mutation { submitTask(input: { type: "b" }) { id } }`, {}, b.apiKey);
      const read = await gql(url, `query($id: ID!) { task(id: $id) { status } }`, { id: submitted.data?.submitTask.id ?? "task_x" }, b.apiKey);
      expect(submitted.errors).toBeUndefined();
      expect(read.errors).toBeUndefined();
      return performance.now() - started;
    };
    const baseline: number[] = [];
    for (let i = 0; i < 10; i++) baseline.push(await bOnce());

    const codes = new Map<string, number>();
    const retryAfters = new Set<unknown>();
    let stop = false;
    const heavy = Array.from({ length: HEAVY_LOOPS }, async () => {
      let after: string | null = null;
      while (!stop) {
        const res = await gql<{ tasks: { pageInfo: { endCursor: string; hasNextPage: boolean } } }>(url, HEAVY_READ, { a: after }, a.apiKey);
        const code = codeOf(res) ?? `OK ${res.status}`;
        codes.set(code, (codes.get(code) ?? 0) + 1);
        if (code === "RATE_LIMITED") {
          expect(res.status).toBe(429);
          retryAfters.add(res.errors?.[0]?.extensions?.retryAfterSeconds);
        }
        after = res.data?.tasks.pageInfo.hasNextPage ? res.data.tasks.pageInfo.endCursor : null;
      }
    });
    // Let A's loops fill whatever they can take before B measures.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const during: number[] = [];
    for (let i = 0; i < 15; i++) {
      during.push(await bOnce());
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    stop = true;
    await Promise.all(heavy);

    const report = { baselineP50: Math.round(median(baseline)), duringP50: Math.round(median(during)), duringMax: Math.round(Math.max(...during)), codes: Object.fromEntries(codes) };
    console.info("tenant-concurrency", JSON.stringify(report));
    // Unbounded, B's median was ~2.8 s in QA's run (and several times this bound here, see the commit).
    expect(report.duringP50).toBeLessThan(500);
    // A was served (its share of the pool), and whatever it was refused is RATE_LIMITED, never an internal error.
    expect(codes.get("OK 200") ?? 0).toBeGreaterThan(0);
    expect([...codes.keys()].filter((c) => c !== "OK 200" && c !== "RATE_LIMITED")).toEqual([]);
    for (const seconds of retryAfters) expect(seconds).toBeGreaterThanOrEqual(1);
  }, 120_000);

  it("queues a tenant's operations past its share, refuses past the queue bound and after the wait, over HTTP and WebSocket", async () => {
    // A task seam whose reads hold until released: the tenant's first 3 calls hold its 3 slots.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let calls = 0;
    const held = async (): Promise<never> => {
      calls += 1;
      await released;
      throw new NotFoundError("task");
    };
    const tasks: TaskService = { submit: held, submitWithin: held, submitRefs: held, get: held, list: held, attempts: held, events: held, cancel: held, redrive: held };
    const gateway = await platform.startAnother({ deps: { taskService: tasks } });
    const metricsText = async () => (await fetch(gateway.url.replace("/graphql", "/metrics"))).text();
    const c = await createTenant(gateway, "flood", { apiRatePerSecond: 1000, apiBurst: 1000 });
    const other = await createTenant(gateway, "other");
    const read = () => gql(gateway.url, TASK, { id: SOME_TASK_ID }, c.apiKey);

    // The key checked once (and cached) before the flood: 100 first uses at once would each verify it.
    expect((await gql(gateway.url, `{ tenant { id } }`, {}, c.apiKey)).errors).toBeUndefined();
    const running = Array.from({ length: 3 }, read);
    const waiting = Array.from({ length: 100 }, read);
    await waitFor(async () => calls === 3 && /_waiting\{[^}]*\} 100\n/.test(await metricsText()), 5_000);
    expect(await metricsText()).toMatch(/tasklane_tenant_operations_waiting\{[^}]*\} 100\n/);
    // Past the bound: refused at once, 429 + Retry-After, RATE_LIMITED with retryAfterSeconds.
    const refused = await read();
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(refused.errors).toMatchObject([{ extensions: { code: "RATE_LIMITED", retryAfterSeconds: 1 } }]);
    // A WebSocket operation of the same tenant is bounded the same way.
    const client = createClient({ url: httpToWs(gateway.url), webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${c.apiKey}` }, retryAttempts: 0 });
    try {
      const wsCode = await new Promise<unknown>((resolve, reject) => {
        let code: unknown;
        client.subscribe(
          { query: TASK, variables: { id: SOME_TASK_ID } },
          { next: (r) => (code = r.errors?.[0]?.extensions?.code), error: reject, complete: () => resolve(code) },
        );
      });
      expect(wsCode).toBe("RATE_LIMITED");
    } finally {
      await client.dispose();
    }
    // Another tenant and the operator are not held up by C's share.
    expect((await gql(gateway.url, `{ tenant { id } }`, {}, other.apiKey)).errors).toBeUndefined();
    expect((await createTenant(gateway, "while-flooded")).apiKey).toBeTruthy();
    // The waiting ones give up after MAX_WAIT_MS (5 s) with RATE_LIMITED; the running ones end as the seam says.
    const timedOut = await Promise.all(waiting);
    expect(new Set(timedOut.map((r) => `${r.status} ${codeOf(r)}`))).toEqual(new Set(["429 RATE_LIMITED"]));
    release();
    expect((await Promise.all(running)).map(codeOf)).toEqual(["NOT_FOUND", "NOT_FOUND", "NOT_FOUND"]);
    const metrics = await metricsText();
    expect(metrics).toMatch(/tasklane_tenant_operations_refused_total\{[^}]*reason="queue_full"[^}]*\} 2\n/);
    expect(metrics).toMatch(/tasklane_tenant_operations_refused_total\{[^}]*reason="wait_timeout"[^}]*\} 100\n/);
    expect(metrics).toMatch(/tasklane_tenant_operations_waiting\{[^}]*\} 0\n/);
    // Slots all came back: the tenant runs again at once.
    expect(codeOf(await read())).toBe("NOT_FOUND");
  }, 30_000);

  it("lets a tenant's long polls wait without holding its slots: its submissions still go through", async () => {
    const url = platform.gateway.url;
    const d = await createTenant(platform.gateway, "pollers");
    const upsert = await gql(url, `mutation { upsertQueue(input: { name: "pull", mode: PULL }) { name } }`, {}, d.apiKey);
    expect(upsert.errors).toBeUndefined();
    // Ten pollers, more than the tenant's share of 3, each waiting 4 s on an empty queue.
    const polls = Array.from({ length: 10 }, (_, i) =>
      gql(url, `mutation { leaseTasks(queue: "pull", workerId: "w${i}", max: 1, waitSeconds: 4) { leaseToken } }`, {}, d.apiKey),
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    const started = performance.now();
    const submitted = await gql(url, `mutation { submitTask(input: { type: "x", queue: "pull" }) { id } }`, {}, d.apiKey);
    const submitMs = performance.now() - started;
    expect(submitted.errors).toBeUndefined();
    expect(submitMs).toBeLessThan(1_000);
    const answers = await Promise.all(polls);
    expect(answers.map(codeOf).filter((code) => code !== undefined)).toEqual([]);
    // The submitted task went to exactly one poller.
    expect(answers.flatMap((r) => (r.data as { leaseTasks: unknown[] }).leaseTasks)).toHaveLength(1);
  });
});
