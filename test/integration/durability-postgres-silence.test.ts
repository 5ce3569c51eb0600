/**
 * Postgres lost without a reset (a failover, a NAT or firewall forgetting the
 * flow): the TCP proxy's silence() leaves every open connection open and
 * carrying nothing, while new connections go through. A scheduler whose
 * connections went silent must still expire the lease of a task whose worker
 * died, and a worker whose connections went silent must still start and
 * record tasks: each statement stuck on a silent connection fails after
 * DATABASE_QUERY_TIMEOUT_SECONDS (2 s here) and its connection is dropped.
 * Without that, each stuck statement held its pool connection for as long
 * as TCP kept trying (for ever behind this proxy, which acknowledges).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor, type AppProcess } from "../helpers/app-process.js";
import { startReceiver, type HttpReceiver } from "../helpers/http-receiver.js";
import { createTenant, createTestDatabase, createTestRedis, gql, startGateway, type CreatedTenant, type StartedGateway, type TestDatabase, type TestRedis } from "../helpers/platform.js";
import { printAppLogsOnFailure, startServingApp } from "../helpers/ready-apps.js";
import { startTcpProxy, type TcpProxy } from "../helpers/tcp-proxy.js";

const TIMEOUT_SECONDS = 1;
const LEASE_MS = (TIMEOUT_SECONDS + 15) * 1000;

let tdb: TestDatabase;
let testRedis: TestRedis;
let proxy: TcpProxy;
let gateway: StartedGateway;
let tenant: CreatedTenant;
let receiver: HttpReceiver;
const apps: AppProcess[] = [];
/** Types whose first attempt the endpoint never answers (its worker is killed meanwhile). */
const hangFirst = new Set<string>();
/** Types whose requests are answered only when the test lets them go. */
const holdTypes = new Set<string>();
let held: Array<() => void> = [];

const env = (databaseUrl: string) => ({
  DATABASE_URL: databaseUrl,
  REDIS_URL: testRedis.url,
  REDIS_KEY_PREFIX: testRedis.prefix,
  ALLOW_PRIVATE_TARGETS: "1",
  DATABASE_QUERY_TIMEOUT_SECONDS: "2",
  LOG_LEVEL: "warn",
});

beforeAll(async () => {
  tdb = await createTestDatabase("dursilence");
  testRedis = createTestRedis();
  proxy = await startTcpProxy("127.0.0.1", Number(new URL(tdb.url).port || 5432));
  receiver = await startReceiver((req, res) => {
    const { taskId, type, attempt } = req.json as { taskId: string; type: string; attempt: number };
    if (hangFirst.has(type) && attempt === 1) return;
    const answer = () => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ran: taskId, attempt }));
    if (holdTypes.has(type)) held.push(answer);
    else answer();
  });
  gateway = await startGateway({ databaseUrl: tdb.url, redis: testRedis, env: { ALLOW_PRIVATE_TARGETS: "1" } });
  tenant = await createTenant(gateway);
  const res = await gql(gateway.url, `mutation ($i: UpsertQueueInput!) { upsertQueue(input: $i) { name } }`, { i: { name: "push", mode: "PUSH", endpointUrl: `${receiver.url}/run` } }, tenant.apiKey);
  expect(res.errors).toBeUndefined();
  apps.push((await startServingApp("scheduler", env(proxy.rewrite(tdb.url)))).app);
}, 120_000);

afterAll(async () => {
  await Promise.all(apps.map((a) => a.stop(5_000)));
  await gateway?.close();
  await receiver?.close();
  await proxy?.close();
  await testRedis?.cleanup();
  await tdb?.drop();
});

const submit = async (type: string, n: number, timeoutSeconds = TIMEOUT_SECONDS) => {
  const inputs = Array.from({ length: n }, (_, i) => ({ type, queue: "push", timeoutSeconds, maxAttempts: 3, payload: { i } }));
  const res = await gql<{ submitTasks: { id: string }[] }>(gateway.url, `mutation ($i: [SubmitTaskInput!]!) { submitTasks(inputs: $i) { id } }`, { i: inputs }, tenant.apiKey);
  return res.data!.submitTasks.map((t) => t.id);
};

const outcomesOf = async (ids: string[]) =>
  (
    await tdb.db.pool.query<{ id: string; status: string; outcomes: string[] }>(
      "SELECT t.id, t.status::text, coalesce((SELECT array_agg(a.outcome::text ORDER BY a.number) FROM task_attempts a WHERE a.task_id = t.id), '{}') AS outcomes FROM tasks t WHERE t.id = ANY($1)",
      [ids],
    )
  ).rows;

describe("durability: Postgres connections lost without a reset", () => {
  printAppLogsOnFailure(apps);

  it("a scheduler whose connections went silent still expires the lease of a dead worker's task", async () => {
    hangFirst.add("orphan");
    const doomed = (await startServingApp("worker", env(tdb.url))).app;
    apps.push(doomed);
    const ids = await submit("orphan", 3);
    await waitFor("the first attempts at the endpoint", () => ids.every((id) => receiver.requests.some((r) => (r.json as { taskId: string }).taskId === id)), 20_000, 20);
    doomed.kill("SIGKILL");
    await doomed.exited;
    // Every connection the scheduler holds goes silent; it can only recover on new ones.
    proxy.silence();
    const silencedAt = Date.now();
    apps.push((await startServingApp("worker", env(tdb.url))).app);
    await waitFor("every task SUCCEEDED", async () => (await outcomesOf(ids)).every((t) => t.status === "SUCCEEDED"), LEASE_MS + 20_000, 200);
    const tookMs = Date.now() - silencedAt;
    for (const t of await outcomesOf(ids)) expect(t.outcomes, t.id).toEqual(["LEASE_EXPIRED", "SUCCEEDED"]);
    console.log(`scheduler's connections silent: the dead worker's 3 tasks ran again and SUCCEEDED ${tookMs} ms after the silence (lease ${LEASE_MS} ms)`);
  }, 90_000);

  it("a worker whose connections went silent still starts and records tasks", async () => {
    const worker = (await startServingApp("worker", env(proxy.rewrite(tdb.url)))).app;
    apps.push(worker);
    // Its pool is warm: a round of tasks through it.
    const warm = await submit("warm", 10);
    await waitFor("the warm-up tasks", async () => (await outcomesOf(warm)).every((t) => t.status === "SUCCEEDED"), 20_000, 50);
    // Only this worker takes jobs from here on.
    for (const app of apps.filter((a) => a.name === "worker" && a !== worker)) await app.stop(5_000);
    proxy.silence();
    const silencedAt = Date.now();
    const ids = await submit("after", 10);
    await waitFor("every task SUCCEEDED", async () => (await outcomesOf(ids)).every((t) => t.status === "SUCCEEDED"), 40_000, 100);
    const tookMs = Date.now() - silencedAt;
    for (const t of await outcomesOf(ids)) expect(t.outcomes, t.id).toEqual(["SUCCEEDED"]);
    console.log(`worker's connections silent: 10 new tasks all SUCCEEDED ${tookMs} ms after the silence`);
  }, 90_000);

  it("a worker whose connections went silent with outcomes to record keeps them and records each once", async () => {
    for (const app of apps.filter((a) => a.name === "worker")) await app.stop(5_000);
    const worker = (await startServingApp("worker", env(proxy.rewrite(tdb.url)))).app;
    apps.push(worker);
    holdTypes.add("held");
    // Its pool warm, as a busy worker's is: every connection it holds goes silent below.
    const busy = (await Promise.all(Array.from({ length: 6 }, (_, k) => submit(`busy${k}`, 100)))).flat();
    await waitFor("the busy tasks", async () => (await outcomesOf(busy)).every((t) => t.status === "SUCCEEDED"), 60_000, 100);
    // A lease of 45 s: anything that is not recorded by then runs again, which the test would see.
    const ids = await submit("held", 20, 30);
    await waitFor("every request at the endpoint", () => held.length === ids.length, 20_000, 20);
    const pooled = await tdb.db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'tasklane-worker'");
    proxy.silence();
    const silencedAt = Date.now();
    const answers = held;
    held = [];
    for (const answer of answers) answer();
    await waitFor("every task SUCCEEDED", async () => (await outcomesOf(ids)).every((t) => t.status === "SUCCEEDED"), 30_000, 100);
    const tookMs = Date.now() - silencedAt;
    for (const t of await outcomesOf(ids)) expect(t.outcomes, t.id).toEqual(["SUCCEEDED"]);
    for (const id of ids) expect(receiver.requests.filter((r) => (r.json as { taskId: string }).taskId === id)).toHaveLength(1);
    expect(worker.output()).not.toContain("could not record attempt outcome");
    console.log(`worker's ${pooled.rows[0]!.n} connections silent with 20 outcomes to record: all SUCCEEDED once ${tookMs} ms after the silence`);
  }, 90_000);
});
