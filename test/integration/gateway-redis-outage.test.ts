/**
 * A Redis outage seen from a real gateway process: every mutation that
 * commits to Postgres and then touches Redis (dispatch fast path, pull
 * doorbell, cancel announcement, a resumed queue's re-dispatch) answers as it
 * would with Redis up, within the fast path's bound, and its rows are in
 * Postgres; once Redis is back the system goes on. Redis is taken away
 * through a TCP proxy, so the shared server keeps running for everyone else.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../helpers/app-process.js";
import { gql } from "../helpers/platform.js";
import { createTenantVia, printAppLogsOnFailure, startGatewayBehindRedisProxy, type GatewayProcess, type RedisProxiedGateway } from "../helpers/ready-apps.js";
import type { TcpProxy } from "../helpers/tcp-proxy.js";
import type { TestDatabase } from "../helpers/test-database.js";

let tdb: TestDatabase;
let proxy: TcpProxy;
let gateway: GatewayProcess;
let adminToken: string;
let platform: RedisProxiedGateway | undefined;
const apps: GatewayProcess["app"][] = [];

beforeAll(async () => {
  platform = await startGatewayBehindRedisProxy("rdout", { ALLOW_PRIVATE_TARGETS: "1" });
  ({ tdb, proxy, gateway, adminToken } = platform);
  apps.push(gateway.app);
});

afterAll(async () => {
  await platform?.stop();
});

/** One call with a client-side timeout, as the QA script made them: the answer and how long it took. */
async function timed(key: string, query: string, variables: Record<string, unknown> = {}): Promise<{ ms: number; status: number; body: { data?: Record<string, unknown> | null; errors?: unknown[] } | string }> {
  const started = Date.now();
  try {
    const res = await fetch(gateway.url, {
      method: "POST",
      signal: AbortSignal.timeout(10_000),
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify({ query, variables }),
    });
    return { ms: Date.now() - started, status: res.status, body: (await res.json()) as { data?: Record<string, unknown> | null; errors?: unknown[] } };
  } catch (error) {
    return { ms: Date.now() - started, status: 0, body: `no answer: ${String(error)}` };
  }
}

const ready = async () => (await fetch(gateway.url.replace("/graphql", "/readyz"))).status;

describe("a Redis outage", () => {
  printAppLogsOnFailure(apps);

  it("answers every post-commit mutation within the fast path's bound, with its usual answer, keeps what it committed, and goes on once Redis is back", async () => {
    const { tenantId, apiKey } = await createTenantVia(gateway.url, adminToken, "outage");
    const call = (query: string, variables?: Record<string, unknown>) => gql<Record<string, any>>(gateway.url, query, variables, apiKey);
    const ok = async (query: string, variables?: Record<string, unknown>) => {
      const res = await call(query, variables);
      expect(res.errors, query).toBeUndefined();
      return res.data as Record<string, any>;
    };
    await ok(`mutation { upsertQueue(input: {name: "p", mode: PUSH, endpointUrl: "http://127.0.0.1:9/outage"}) { name } }`);
    await ok(`mutation { upsertQueue(input: {name: "held", mode: PUSH, endpointUrl: "http://127.0.0.1:9/outage", paused: true}) { name } }`);
    await ok(`mutation { submitTask(input: {type: "held", queue: "held", payload: {}}) { id } }`);
    // Three PULL tasks leased: one to go DEAD (redrive), one to cancel while RUNNING, one to fail retryably.
    await ok(`mutation { submitTasks(inputs: [{type: "a", payload: {}}, {type: "b", payload: {}}, {type: "c", payload: {}}]) { id } }`);
    const leased = (await ok(`mutation { leaseTasks(queue: "default", workerId: "w", max: 3, leaseSeconds: 60) { leaseToken task { id } } }`)).leaseTasks as { leaseToken: string; task: { id: string } }[];
    expect(leased).toHaveLength(3);
    const [dead, running, retried] = leased as [(typeof leased)[0], (typeof leased)[0], (typeof leased)[0]];
    await ok(`mutation ($id: ID!, $t: String!) { failTask(taskId: $id, leaseToken: $t, error: "x", retryable: false) { status } }`, { id: dead.task.id, t: dead.leaseToken });

    await proxy.cut();
    await waitFor("the gateway to see Redis down", async () => (await ready()) === 503, 10_000, 100);

    const [pushSubmit, pullSubmit, pullBatch, workflow, redrive, cancel, retry, resume] = await Promise.all([
      timed(apiKey, `mutation { submitTask(input: {type: "x", queue: "p", payload: {}}) { id status } }`),
      timed(apiKey, `mutation { submitTask(input: {type: "x", payload: {}}) { id status } }`),
      timed(apiKey, `mutation { submitTasks(inputs: [{type: "x", payload: {}}, {type: "y", payload: {}}]) { id status } }`),
      timed(apiKey, `mutation { submitWorkflow(input: {name: "w", tasks: [{key: "a", type: "x", payload: {}}, {key: "b", type: "y", dependsOn: ["a"]}]}) { id tasks { key task { id status } } } }`),
      timed(apiKey, `mutation ($id: ID!) { redriveTask(id: $id) { id status } }`, { id: dead.task.id }),
      timed(apiKey, `mutation ($id: ID!) { cancelTask(id: $id) { id status } }`, { id: running.task.id }),
      timed(apiKey, `mutation ($id: ID!, $t: String!) { failTask(taskId: $id, leaseToken: $t, error: "again", retryable: true) { id status } }`, { id: retried.task.id, t: retried.leaseToken }),
      timed(apiKey, `mutation { resumeQueue(name: "held") { name paused } }`),
    ]);
    const all = { pushSubmit, pullSubmit, pullBatch, workflow, redrive, cancel, retry, resume };
    for (const [name, r] of Object.entries(all)) {
      expect(r.status, `${name}: ${JSON.stringify(r.body)}`).toBe(200);
      expect(typeof r.body === "object" ? r.body.errors : r.body, name).toBeUndefined();
      // The fast path's bound is 2 s; 5 s leaves room for a loaded machine.
      expect(r.ms, name).toBeLessThan(5_000);
    }
    const data = (r: (typeof all)["pushSubmit"]) => (r.body as { data: Record<string, any> }).data;
    expect(data(pushSubmit).submitTask.status).toBe("QUEUED");
    expect(data(pullSubmit).submitTask.status).toBe("QUEUED");
    expect(data(pullBatch).submitTasks.map((t: { status: string }) => t.status)).toEqual(["QUEUED", "QUEUED"]);
    expect(data(workflow).submitWorkflow.tasks.map((t: { task: { status: string } }) => t.task.status).sort()).toEqual(["BLOCKED", "QUEUED"]);
    expect(data(redrive).redriveTask.status).toBe("QUEUED");
    expect(data(cancel).cancelTask.status).toBe("CANCELLED");
    expect(data(retry).failTask.status).toBe("RETRYING");
    expect(data(resume).resumeQueue).toEqual({ name: "held", paused: false });

    // What was answered is what Postgres holds.
    const client = new pg.Client({ connectionString: tdb.url });
    await client.connect();
    try {
      const rows = await client.query<{ id: string; status: string }>(`SELECT id, status::text FROM tasks WHERE tenant_id = $1`, [tenantId]);
      const status = new Map(rows.rows.map((r) => [r.id, r.status]));
      expect(status.get(data(pushSubmit).submitTask.id)).toBe("QUEUED");
      expect(status.get(data(pullSubmit).submitTask.id)).toBe("QUEUED");
      for (const t of data(pullBatch).submitTasks as { id: string }[]) expect(status.get(t.id)).toBe("QUEUED");
      expect(status.get(dead.task.id)).toBe("QUEUED");
      expect(status.get(running.task.id)).toBe("CANCELLED");
      expect(status.get(retried.task.id)).toBe("RETRYING");
      expect((await client.query(`SELECT paused FROM queues WHERE tenant_id = $1 AND name = 'held'`, [tenantId])).rows[0]).toEqual({ paused: false });
    } finally {
      await client.end();
    }

    // Redis back: the gateway is ready again, the tasks accepted meanwhile are leased, and a long poll is woken by a submission.
    await proxy.restore();
    await waitFor("the gateway to see Redis again", async () => (await ready()) === 200, 20_000, 100);
    const workflowFirst = (data(workflow).submitWorkflow.tasks as { key: string; task: { id: string } }[]).find((t) => t.key === "a")?.task.id;
    const expected = [data(pullSubmit).submitTask.id, ...data(pullBatch).submitTasks.map((t: { id: string }) => t.id), dead.task.id, workflowFirst].sort();
    // The retried task's backoff (about a second from its failTask) has passed, so the lease below takes it
    // too and the long poll after it sees only the fresh task. Without this wait the poll raced the backoff
    // once the outage's mutations all answer at once (resumeQueue waited out its 2 s bound before
    // MissingJobFinder refused a lost connection), and took the retried task instead.
    await waitFor(
      "the retried task's backoff to pass",
      async () => (await tdb.db.pool.query<{ due: boolean }>(`SELECT run_at <= now() AS due FROM tasks WHERE id = $1`, [retried.task.id])).rows[0]?.due === true,
      10_000,
      100,
    );
    const after = (await ok(`mutation { leaseTasks(queue: "default", workerId: "w2", max: 10, leaseSeconds: 60) { task { id } } }`)).leaseTasks as { task: { id: string } }[];
    expect(after.map((l) => l.task.id).filter((id) => id !== retried.task.id).sort()).toEqual(expected);
    const poll = timed(apiKey, `mutation { leaseTasks(queue: "default", workerId: "w3", max: 1, waitSeconds: 8) { task { id type } } }`);
    await new Promise((r) => setTimeout(r, 300));
    const fresh = await ok(`mutation { submitTask(input: {type: "after", payload: {}}) { id } }`);
    const polled = await poll;
    expect(polled.ms).toBeLessThan(3_000);
    expect((polled.body as { data: Record<string, any> }).data.leaseTasks.map((l: { task: { id: string } }) => l.task.id)).toEqual([fresh.submitTask.id]);
  }, 90_000);
});
