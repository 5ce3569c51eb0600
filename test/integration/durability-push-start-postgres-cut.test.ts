/**
 * PUSH tasks whose jobs a worker took from Redis while its Postgres was cut:
 * the start statement never reached Postgres, so the tasks are still QUEUED.
 * The worker puts their jobs back (due after its back-off), so once Postgres
 * answers again each runs once, attempt 1, without a lease expiry. A real
 * worker behind a TCP proxy to Postgres and no scheduler: nothing else puts
 * the jobs back (the reconciler's sweep would, up to a pass later).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor, type AppProcess } from "../helpers/app-process.js";
import { startReceiver, type HttpReceiver } from "../helpers/http-receiver.js";
import { createTenant, createTestDatabase, createTestRedis, gql, startGateway, type CreatedTenant, type StartedGateway, type TestDatabase, type TestRedis } from "../helpers/platform.js";
import { printAppLogsOnFailure, startServingApp } from "../helpers/ready-apps.js";
import { startTcpProxy, type TcpProxy } from "../helpers/tcp-proxy.js";

const TASKS = 30;

let tdb: TestDatabase;
let testRedis: TestRedis;
let proxy: TcpProxy;
let gateway: StartedGateway;
let tenant: CreatedTenant;
let receiver: HttpReceiver;
const apps: AppProcess[] = [];

const env = (databaseUrl: string) => ({
  DATABASE_URL: databaseUrl,
  REDIS_URL: testRedis.url,
  REDIS_KEY_PREFIX: testRedis.prefix,
  ALLOW_PRIVATE_TARGETS: "1",
  LOG_LEVEL: "warn",
});

beforeAll(async () => {
  tdb = await createTestDatabase("durstartcut");
  testRedis = createTestRedis();
  proxy = await startTcpProxy("127.0.0.1", Number(new URL(tdb.url).port || 5432));
  receiver = await startReceiver();
  gateway = await startGateway({ databaseUrl: tdb.url, redis: testRedis, env: { ALLOW_PRIVATE_TARGETS: "1" } });
  tenant = await createTenant(gateway);
  const res = await gql(gateway.url, `mutation ($i: UpsertQueueInput!) { upsertQueue(input: $i) { name } }`, { i: { name: "push", mode: "PUSH", endpointUrl: `${receiver.url}/run` } }, tenant.apiKey);
  expect(res.errors).toBeUndefined();
  apps.push((await startServingApp("worker", env(proxy.rewrite(tdb.url)))).app);
}, 120_000);

afterAll(async () => {
  await Promise.all(apps.map((a) => a.stop()));
  await gateway?.close();
  await receiver?.close();
  await proxy?.close();
  await testRedis?.cleanup();
  await tdb?.drop();
});

const submit = async (n: number, type: string) => {
  const inputs = Array.from({ length: n }, (_, i) => ({ type: `${type}${i}`, queue: "push" }));
  const res = await gql<{ submitTasks: { id: string }[] }>(gateway.url, `mutation ($i: [SubmitTaskInput!]!) { submitTasks(inputs: $i) { id } }`, { i: inputs }, tenant.apiKey);
  return res.data!.submitTasks.map((t) => t.id);
};

describe("durability: PUSH starts while the worker's Postgres is cut", () => {
  printAppLogsOnFailure(apps);

  it("tasks whose jobs were taken while the start could not reach Postgres run once when it is back", async () => {
    // The worker knows the queue (its directory reloads every second) before Postgres goes.
    const warm = await submit(1, "warm");
    await waitFor("the warm-up task", async () => (await tdb.db.pool.query("SELECT 1 FROM tasks WHERE id = $1 AND status = 'SUCCEEDED'", [warm[0]])).rowCount === 1, 20_000, 50);
    await proxy.cut();
    const ids = await submit(TASKS, "t");
    // The worker takes the jobs and cannot start them.
    const worker = apps[0] as AppProcess;
    await waitFor("a start refused", () => worker.output().includes("could not start fetched tasks"), 20_000, 50);
    const restoredAt = Date.now();
    await proxy.restore();
    await waitFor(
      "every task SUCCEEDED",
      async () => (await tdb.db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM tasks WHERE id = ANY($1) AND status = 'SUCCEEDED'", [ids])).rows[0]!.n === TASKS,
      20_000,
      50,
    );
    const tookMs = Date.now() - restoredAt;
    const { rows } = await tdb.db.pool.query<{ id: string; attempts: number; outcomes: string[] }>(
      "SELECT t.id, t.attempts, (SELECT array_agg(a.outcome::text ORDER BY a.number) FROM task_attempts a WHERE a.task_id = t.id) AS outcomes FROM tasks t WHERE t.id = ANY($1)",
      [ids],
    );
    for (const row of rows) {
      expect(row, row.id).toMatchObject({ attempts: 1, outcomes: ["SUCCEEDED"] });
      expect(receiver.requests.filter((r) => (r.json as { taskId: string }).taskId === row.id)).toHaveLength(1);
    }
    console.log(`${TASKS} tasks taken while Postgres was cut: all SUCCEEDED ${tookMs} ms after it came back`);
  }, 90_000);
});
