/**
 * A PUSH worker SIGKILLed while the outcomes of its attempts are being
 * written: Postgres is cut under the worker (a TCP proxy) as the endpoint
 * answers, so every success is in the worker's completion batch and none is
 * recorded, then the worker is killed. Each of those tasks must run again,
 * but only once its lease (timeout + 15 s) has expired, and be recorded
 * once: outcomes LEASE_EXPIRED then SUCCEEDED, two requests, the second after
 * the first lease's end. A workflow's root among them releases its two
 * children once, after its second attempt. Real scheduler (straight to
 * Postgres, it expires the leases) and worker processes.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor, type AppProcess } from "../helpers/app-process.js";
import { startReceiver, type HttpReceiver } from "../helpers/http-receiver.js";
import { createTenant, createTestDatabase, createTestRedis, gql, startGateway, type CreatedTenant, type StartedGateway, type TestDatabase, type TestRedis } from "../helpers/platform.js";
import { printAppLogsOnFailure, startServingApp } from "../helpers/ready-apps.js";
import { startTcpProxy, type TcpProxy } from "../helpers/tcp-proxy.js";

const TASKS = 20;
const TIMEOUT_SECONDS = 1;
/** The worker's lease: the task's timeout and its grace (apps/worker LEASE_GRACE_SECONDS). */
const LEASE_MS = (TIMEOUT_SECONDS + 15) * 1000;

let tdb: TestDatabase;
let testRedis: TestRedis;
let proxy: TcpProxy;
let gateway: StartedGateway;
let tenant: CreatedTenant;
let receiver: HttpReceiver;
const apps: AppProcess[] = [];
/** First attempts' answers, held until the test lets them go (while holdFirst); later attempts are answered at once. */
let holding: Array<() => void> = [];
let holdFirst = true;

const env = (databaseUrl: string) => ({
  DATABASE_URL: databaseUrl,
  REDIS_URL: testRedis.url,
  REDIS_KEY_PREFIX: testRedis.prefix,
  ALLOW_PRIVATE_TARGETS: "1",
  RECONCILE_INTERVAL_SECONDS: "1",
  LOG_LEVEL: "warn",
});

beforeAll(async () => {
  tdb = await createTestDatabase("durwkill");
  testRedis = createTestRedis();
  proxy = await startTcpProxy("127.0.0.1", Number(new URL(tdb.url).port || 5432));
  receiver = await startReceiver((req, res) => {
    const { taskId, attempt } = req.json as { taskId: string; attempt: number };
    const answer = () => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ran: taskId, attempt }));
    if (attempt === 1 && holdFirst) holding.push(answer);
    else answer();
  });
  gateway = await startGateway({ databaseUrl: tdb.url, redis: testRedis, env: { ALLOW_PRIVATE_TARGETS: "1" } });
  tenant = await createTenant(gateway);
  const res = await gql(gateway.url, `mutation ($i: UpsertQueueInput!) { upsertQueue(input: $i) { name } }`, { i: { name: "push", mode: "PUSH", endpointUrl: `${receiver.url}/run` } }, tenant.apiKey);
  expect(res.errors).toBeUndefined();
  apps.push((await startServingApp("scheduler", env(tdb.url))).app);
}, 120_000);

afterAll(async () => {
  for (const answer of holding) answer();
  await Promise.all(apps.map((a) => a.stop()));
  await gateway?.close();
  await receiver?.close();
  await proxy?.close();
  await testRedis?.cleanup();
  await tdb?.drop();
});

interface AttemptRow {
  task_id: string;
  number: number;
  outcome: string | null;
  started_at: Date;
  finished_at: Date | null;
}

describe("durability: a worker killed with its completions unwritten", () => {
  printAppLogsOnFailure(apps);

  it("runs each task again only after its lease expired, and records it once", async () => {
    const worker = (await startServingApp("worker", env(proxy.rewrite(tdb.url)))).app;
    apps.push(worker);
    const inputs = Array.from({ length: TASKS }, (_, i) => ({ type: `t${i}`, queue: "push", timeoutSeconds: TIMEOUT_SECONDS, maxAttempts: 3 }));
    const submitted = await gql<{ submitTasks: { id: string }[] }>(gateway.url, `mutation ($i: [SubmitTaskInput!]!) { submitTasks(inputs: $i) { id } }`, { i: inputs }, tenant.apiKey);
    const ids = submitted.data!.submitTasks.map((t) => t.id);
    const wf = await gql<{ submitWorkflow: { tasks: { key: string; task: { id: string } }[] } }>(
      gateway.url,
      `mutation ($i: SubmitWorkflowInput!) { submitWorkflow(input: $i) { tasks { key task { id } } } }`,
      {
        i: {
          name: "release-after-kill",
          tasks: [
            { key: "root", type: "root", queue: "push", timeoutSeconds: TIMEOUT_SECONDS, maxAttempts: 3 },
            { key: "left", type: "left", queue: "push", dependsOn: ["root"] },
            { key: "right", type: "right", queue: "push", dependsOn: ["root"] },
          ],
        },
      },
      tenant.apiKey,
    );
    expect(wf.errors).toBeUndefined();
    const wfIds = new Map(wf.data!.submitWorkflow.tasks.map((t) => [t.key, t.task.id]));
    await waitFor("every first attempt at the endpoint", () => holding.length === TASKS + 1, 20_000, 20);
    // The worker's Postgres goes; the answers come in: every success waits in its completion batch.
    await proxy.cut();
    const answers = holding;
    holding = [];
    for (const answer of answers) answer();
    await new Promise((r) => setTimeout(r, 1_000));
    worker.kill("SIGKILL");
    await worker.exited;
    const killedAt = Date.now();
    holdFirst = false;
    await proxy.restore();
    const running = await tdb.db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM tasks WHERE id = ANY($1) AND status = 'RUNNING' AND attempts = 1", [ids]);
    expect(running.rows[0]!.n).toBe(TASKS);
    apps.push((await startServingApp("worker", env(tdb.url))).app);

    await waitFor(
      "every task SUCCEEDED",
      async () => (await tdb.db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM tasks WHERE id = ANY($1) AND status = 'SUCCEEDED'", [ids])).rows[0]!.n === TASKS,
      LEASE_MS + 20_000,
      100,
    );
    const recoveredMs = Date.now() - killedAt;
    // The workflow: its root like the others, then each child once, after the root's success.
    const children = [wfIds.get("left")!, wfIds.get("right")!];
    await waitFor(
      "the children SUCCEEDED",
      async () => (await tdb.db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM tasks WHERE id = ANY($1) AND status = 'SUCCEEDED'", [children])).rows[0]!.n === 2,
      20_000,
      50,
    );
    const rootAttempts = await tdb.db.pool.query<{ outcome: string; finished_at: Date }>("SELECT outcome::text, finished_at FROM task_attempts WHERE task_id = $1 ORDER BY number", [wfIds.get("root")]);
    expect(rootAttempts.rows.map((a) => a.outcome)).toEqual(["LEASE_EXPIRED", "SUCCEEDED"]);
    for (const child of children) {
      const attempts = await tdb.db.pool.query<{ outcome: string; started_at: Date }>("SELECT outcome::text, started_at FROM task_attempts WHERE task_id = $1", [child]);
      expect(attempts.rows.map((a) => a.outcome)).toEqual(["SUCCEEDED"]);
      expect(attempts.rows[0]!.started_at.getTime()).toBeGreaterThanOrEqual(rootAttempts.rows[1]!.finished_at.getTime());
      expect(receiver.requests.filter((r) => (r.json as { taskId: string }).taskId === child)).toHaveLength(1);
    }
    const { rows } = await tdb.db.pool.query<AttemptRow>("SELECT task_id, number, outcome::text, started_at, finished_at FROM task_attempts WHERE task_id = ANY($1) ORDER BY task_id, number", [ids]);
    const tasks = await tdb.db.pool.query<{ id: string; attempts: number; result: { attempt: number } }>("SELECT id, attempts, result FROM tasks WHERE id = ANY($1)", [ids]);
    for (const task of tasks.rows) {
      const attempts = rows.filter((r) => r.task_id === task.id);
      expect(attempts.map((a) => a.outcome), task.id).toEqual(["LEASE_EXPIRED", "SUCCEEDED"]);
      expect(task.attempts).toBe(2);
      expect(task.result).toEqual({ ran: task.id, attempt: 2 });
      const requests = receiver.requests.filter((r) => (r.json as { taskId: string }).taskId === task.id);
      expect(requests.map((r) => (r.json as { attempt: number }).attempt)).toEqual([1, 2]);
      // Not a moment before the first lease ran out (a second of slack for the two clocks' reads).
      expect(requests[1]!.at).toBeGreaterThanOrEqual(attempts[0]!.started_at.getTime() + LEASE_MS - 1_000);
      expect(attempts[1]!.started_at.getTime()).toBeGreaterThanOrEqual(attempts[0]!.finished_at!.getTime());
    }
    const firstRerun = Math.min(...rows.filter((r) => r.number === 2).map((r) => r.started_at.getTime()));
    console.log(`${TASKS} tasks whose successes died with the worker: run again ${firstRerun - killedAt} ms after the kill (lease ${LEASE_MS} ms from start), all SUCCEEDED ${recoveredMs} ms after it; duplicates ${TASKS}, each after a LEASE_EXPIRED`);
  }, 90_000);
});
