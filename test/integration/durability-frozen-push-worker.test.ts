/**
 * A PUSH worker frozen (SIGSTOP) with a request out, past its lease: the
 * task runs again on another worker and succeeds; when the frozen worker
 * wakes (its endpoint's answer waiting for it), its outcome for that attempt
 * is refused as stale and the newer attempt stands: the task's state,
 * result, events and attempts do not change. Real scheduler and worker processes.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor, type AppProcess } from "../helpers/app-process.js";
import { startReceiver, type HttpReceiver } from "../helpers/http-receiver.js";
import { createTenant, createTestDatabase, createTestRedis, gql, startGateway, type CreatedTenant, type StartedGateway, type TestDatabase, type TestRedis } from "../helpers/platform.js";
import { printAppLogsOnFailure, startServingApp } from "../helpers/ready-apps.js";

const TASKS = 5;
const TIMEOUT_SECONDS = 1;
const LEASE_MS = (TIMEOUT_SECONDS + 15) * 1000;

let tdb: TestDatabase;
let testRedis: TestRedis;
let gateway: StartedGateway;
let tenant: CreatedTenant;
let receiver: HttpReceiver;
const apps: AppProcess[] = [];
/** First attempts' answers, held until the test lets them go. */
let holding: Array<() => void> = [];

const env = () => ({
  DATABASE_URL: tdb.url,
  REDIS_URL: testRedis.url,
  REDIS_KEY_PREFIX: testRedis.prefix,
  ALLOW_PRIVATE_TARGETS: "1",
  LOG_LEVEL: "info",
});

beforeAll(async () => {
  tdb = await createTestDatabase("durfrozen");
  testRedis = createTestRedis();
  receiver = await startReceiver((req, res) => {
    const { taskId, attempt } = req.json as { taskId: string; attempt: number };
    const answer = () => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ran: taskId, attempt }));
    if (attempt === 1) holding.push(answer);
    else answer();
  });
  gateway = await startGateway({ databaseUrl: tdb.url, redis: testRedis, env: { ALLOW_PRIVATE_TARGETS: "1" } });
  tenant = await createTenant(gateway);
  const res = await gql(gateway.url, `mutation ($i: UpsertQueueInput!) { upsertQueue(input: $i) { name } }`, { i: { name: "push", mode: "PUSH", endpointUrl: `${receiver.url}/run` } }, tenant.apiKey);
  expect(res.errors).toBeUndefined();
  apps.push((await startServingApp("scheduler", env())).app);
}, 120_000);

afterAll(async () => {
  for (const answer of holding) answer();
  for (const app of apps) app.kill("SIGCONT");
  await Promise.all(apps.map((a) => a.stop()));
  await gateway?.close();
  await receiver?.close();
  await testRedis?.cleanup();
  await tdb?.drop();
});

interface TaskState {
  id: string;
  status: string;
  attempts: number;
  result: { attempt: number } | null;
  updated_at: Date;
  events: number;
  outcomes: string[];
}

const states = async (ids: string[]) =>
  (
    await tdb.db.pool.query<TaskState>(
      `SELECT t.id, t.status::text, t.attempts, t.result, t.updated_at,
              (SELECT count(*)::int FROM task_events e WHERE e.task_id = t.id) AS events,
              (SELECT array_agg(a.outcome::text ORDER BY a.number) FROM task_attempts a WHERE a.task_id = t.id) AS outcomes
         FROM tasks t WHERE t.id = ANY($1) ORDER BY t.id`,
      [ids],
    )
  ).rows;

describe("durability: a PUSH worker frozen past its lease", () => {
  printAppLogsOnFailure(apps);

  it("runs the task again elsewhere; the frozen worker's late outcome is refused and the newer attempt stands", async () => {
    const { app: frozen, port: frozenMetrics } = await startServingApp("worker", env());
    apps.push(frozen);
    const inputs = Array.from({ length: TASKS }, (_, i) => ({ type: `t${i}`, queue: "push", timeoutSeconds: TIMEOUT_SECONDS, maxAttempts: 3 }));
    const submitted = await gql<{ submitTasks: { id: string }[] }>(gateway.url, `mutation ($i: [SubmitTaskInput!]!) { submitTasks(inputs: $i) { id } }`, { i: inputs }, tenant.apiKey);
    const ids = submitted.data!.submitTasks.map((t) => t.id);
    await waitFor("every first attempt at the endpoint", () => holding.length === TASKS, 20_000, 20);
    frozen.kill("SIGSTOP");
    const frozenAt = Date.now();
    apps.push((await startServingApp("worker", env())).app);
    await waitFor("every task SUCCEEDED on the other worker", async () => (await states(ids)).every((t) => t.status === "SUCCEEDED"), LEASE_MS + 20_000, 100);
    const rerunMs = Date.now() - frozenAt;
    const settled = await states(ids);
    for (const t of settled) expect(t).toMatchObject({ status: "SUCCEEDED", attempts: 2, result: { ran: t.id, attempt: 2 }, outcomes: ["LEASE_EXPIRED", "SUCCEEDED"] });

    // The first attempts' answers arrive, then the frozen worker wakes and tries to record them.
    const answers = holding;
    holding = [];
    for (const answer of answers) answer();
    frozen.kill("SIGCONT");
    // Its timers fire first on waking: each attempt ends as timed out, under the old lease generation.
    const staleCount = async () => {
      const text = await (await fetch(`http://127.0.0.1:${frozenMetrics}/metrics`)).text();
      return Number(/^tasklane_task_outcomes_total\{[^}]*outcome="stale"[^}]*\} (\d+)/m.exec(text)?.[1] ?? 0);
    };
    await waitFor("the woken worker's outcomes refused as stale", async () => (await staleCount()) === TASKS, 15_000, 100);
    await new Promise((r) => setTimeout(r, 1_000));
    // Nothing about the tasks changed: not their state, not their result, no event, no attempt.
    expect(await states(ids)).toEqual(settled);
    for (const id of ids) expect(receiver.requests.filter((r) => (r.json as { taskId: string }).taskId === id).map((r) => (r.json as { attempt: number }).attempt)).toEqual([1, 2]);
    console.log(`${TASKS} tasks whose worker froze: SUCCEEDED elsewhere ${rerunMs} ms after the freeze (lease ${LEASE_MS} ms); the woken worker's ${await staleCount()} outcomes refused as stale`);
  }, 90_000);
});
