import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { repoRoot, startApp, waitFor, type AppProcess } from "../helpers/app-process.js";
import { startReceiver, type HttpReceiver } from "../helpers/http-receiver.js";
import { codeOf, createTenant, createTestDatabase, createTestRedis, gql, startGateway, type CreatedTenant, type StartedGateway, type TestDatabase, type TestRedis } from "../helpers/platform.js";

/**
 * Execution guarantees with real processes: pull workers (the SDK's Worker in
 * its own process) killed or frozen past their lease, idempotency keys under
 * concurrency, and ordering keys across retries on the PUSH fleet.
 */
let tdb: TestDatabase;
let redis: TestRedis;
let gateway: StartedGateway;
let tenant: CreatedTenant;
let receiver: HttpReceiver;
let apps: AppProcess[] = [];
const workers: ChildProcess[] = [];

interface WorkerLine {
  event: string;
  pid: number;
  taskId?: string;
  leaseToken?: string;
  attempt?: number;
  code?: string;
  step?: string;
}

function startPullWorker(env: Record<string, string>) {
  const child = spawn(process.execPath, [path.join(repoRoot, "test/fixtures/pull-worker.mjs")], {
    env: { ...process.env, TASKLANE_URL: gateway.url, TASKLANE_API_KEY: tenant.apiKey, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  workers.push(child);
  const lines: WorkerLine[] = [];
  let buffer = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    buffer += chunk.toString();
    const parts = buffer.split("\n");
    buffer = parts.pop() ?? "";
    for (const p of parts) if (p.trim()) lines.push(JSON.parse(p) as WorkerLine);
  });
  child.stderr?.resume();
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  /** Graceful stop, awaited: a stopping worker must not lease the next test's task. */
  const stop = async () => {
    child.kill("SIGTERM");
    await exited;
  };
  return { child, lines, pid: child.pid as number, stop };
}

const api = <T = Record<string, unknown>>(query: string, variables?: Record<string, unknown>) => gql<T>(gateway.url, query, variables, tenant.apiKey);
const TASK = `id status result attempts attemptHistory { number outcome leaseToken workerId }`;
type TaskView = { id: string; status: string; result: { pid?: number } | null; attempts: number; attemptHistory: { number: number; outcome: string | null; leaseToken: string | null; workerId: string | null }[] };

async function submit(input: Record<string, unknown>): Promise<string> {
  const res = await api<{ submitTask: { id: string } }>(`mutation ($i: SubmitTaskInput!) { submitTask(input: $i) { id } }`, { i: input });
  if (!res.data) throw new Error(JSON.stringify(res.errors));
  return res.data.submitTask.id;
}

const read = async (id: string) => (await api<{ task: TaskView }>(`query ($id: ID!) { task(id: $id) { ${TASK} } }`, { id })).data!.task;

beforeAll(async () => {
  tdb = await createTestDatabase("pullproc");
  redis = createTestRedis();
  receiver = await startReceiver();
  gateway = await startGateway({ databaseUrl: tdb.url, redis, env: { ALLOW_PRIVATE_TARGETS: "1" } });
  tenant = await createTenant(gateway);
  const env = { DATABASE_URL: tdb.url, REDIS_URL: redis.url, REDIS_KEY_PREFIX: redis.prefix, ALLOW_PRIVATE_TARGETS: "1", LOG_LEVEL: "warn" };
  apps = [startApp("scheduler", env), startApp("worker", env)];
});

afterAll(async () => {
  for (const w of workers) {
    if (w.exitCode === null && w.signalCode === null) {
      w.kill("SIGCONT");
      w.kill("SIGKILL");
    }
  }
  await Promise.all(apps.map((a) => a.stop()));
  await gateway?.close();
  await receiver?.close();
  await redis?.cleanup();
  await tdb?.drop();
});

describe("pull workers as processes", () => {
  it("a worker killed with SIGKILL mid-task: the lease expires, the task is re-leased with a new token and completes once", async () => {
    const id = await submit({ type: "kill-me", queue: "default", maxAttempts: 3 });
    const a = startPullWorker({ LEASE_SECONDS: "2", HOLD_MS: "60000" });
    const started = await waitFor("worker A to start the task", () => a.lines.find((l) => l.event === "started" && l.taskId === id), 15_000);
    a.child.kill("SIGKILL");
    const b = startPullWorker({ LEASE_SECONDS: "10", HOLD_MS: "0" });
    const done = await waitFor("the task to succeed on worker B", async () => {
      const t = await read(id);
      return t.status === "SUCCEEDED" ? t : null;
    }, 30_000);
    expect(done.result?.pid).toBe(b.pid);
    expect(done.attemptHistory.map((h) => h.outcome)).toEqual(["LEASE_EXPIRED", "SUCCEEDED"]);
    const [first, second] = done.attemptHistory;
    expect(first!.leaseToken).toBe(started.leaseToken);
    expect(second!.leaseToken).not.toBe(started.leaseToken);
    const generation = (token: string | null) => Number(/^lt_(\d+)_/.exec(token ?? "")?.[1]);
    expect(generation(second!.leaseToken)).toBeGreaterThan(generation(first!.leaseToken));
    expect(b.lines.filter((l) => l.event === "finished" && l.taskId === id)).toHaveLength(1);
    await b.stop();
  }, 60_000);

  it("a worker frozen with SIGSTOP past its lease: after SIGCONT its outcome is refused and the newer attempt stands", async () => {
    const id = await submit({ type: "freeze-me", queue: "default", maxAttempts: 3 });
    const a = startPullWorker({ LEASE_SECONDS: "2", HOLD_MS: "1500" });
    const started = await waitFor("worker A to start", () => a.lines.find((l) => l.event === "started" && l.taskId === id), 15_000);
    a.child.kill("SIGSTOP");
    await waitFor("the lease to expire", async () => (await read(id)).attemptHistory[0]?.outcome === "LEASE_EXPIRED", 15_000);
    const b = startPullWorker({ LEASE_SECONDS: "10", HOLD_MS: "0" });
    await waitFor("worker B to finish", async () => (await read(id)).status === "SUCCEEDED", 15_000);
    a.child.kill("SIGCONT");
    // Woken, A's heartbeat and its late completion are both refused.
    await waitFor("worker A's stale outcome to be refused", () => a.lines.some((l) => l.event === "error" && l.code === "CONFLICT"), 15_000);
    const final = await read(id);
    expect(final.status).toBe("SUCCEEDED");
    expect(final.result?.pid).toBe(b.pid);
    expect(final.attemptHistory.map((h) => h.outcome)).toEqual(["LEASE_EXPIRED", "SUCCEEDED"]);
    // The stale token is refused outright, whatever the worker tried.
    const stale = await api(`mutation ($t: ID!, $l: String!) { completeTask(taskId: $t, leaseToken: $l, result: "stale") { id } }`, { t: id, l: started.leaseToken });
    expect(codeOf(stale)).toBe("CONFLICT");
    expect((await read(id)).result?.pid).toBe(b.pid);
    a.child.kill("SIGKILL");
    await b.stop();
  }, 60_000);
});

describe("idempotency and ordering", () => {
  it("gives one task for 200 concurrent submissions with one idempotency key", async () => {
    const results = await Promise.all(
      Array.from({ length: 200 }, () => api<{ submitTask: { id: string } }>(`mutation { submitTask(input: {type: "once", idempotencyKey: "order-42"}) { id } }`)),
    );
    const ids = new Set(results.map((r) => r.data?.submitTask.id));
    expect(results.every((r) => r.errors === undefined)).toBe(true);
    expect(ids.size).toBe(1);
    const other = await createTenant(gateway);
    const theirs = await gql<{ submitTask: { id: string } }>(gateway.url, `mutation { submitTask(input: {type: "once", idempotencyKey: "order-42"}) { id } }`, {}, other.apiKey);
    expect(ids.has(theirs.data!.submitTask.id)).toBe(false);
  });

  it("runs one ordering key one task at a time, in submission order, across retries, on the PUSH fleet", async () => {
    const spans: { seq: number; attempt: number; start: number; end: number }[] = [];
    receiver.respond(async (req, res) => {
      const body = req.json as { payload: { seq: number; key: string }; attempt: number };
      const start = Date.now();
      await new Promise((r) => setTimeout(r, 60));
      spans.push({ seq: body.payload.seq, attempt: body.attempt, start, end: Date.now() });
      // Task 2 fails its first attempt: the key must wait for its retry.
      const status = body.payload.seq === 2 && body.attempt === 1 ? 500 : 200;
      res.writeHead(status).end("{}");
    });
    await api(`mutation ($i: UpsertQueueInput!) { upsertQueue(input: $i) { name } }`, { i: { name: "ordered", mode: "PUSH", endpointUrl: `${receiver.url}/run` } });
    const inputs = Array.from({ length: 5 }, (_, i) => ({
      type: "ordered",
      queue: "ordered",
      orderingKey: "account-7",
      payload: { seq: i + 1, key: "account-7" },
      maxAttempts: 3,
      backoff: { strategy: "FIXED", delaySeconds: 0.2, jitter: false },
    }));
    // A second key in parallel must not be held back by the first.
    const others = Array.from({ length: 3 }, (_, i) => ({ type: "other", queue: "ordered", orderingKey: "account-8", payload: { seq: 100 + i, key: "account-8" } }));
    const res = await api<{ submitTasks: { id: string }[] }>(`mutation ($i: [SubmitTaskInput!]!) { submitTasks(inputs: $i) { id } }`, { i: [...inputs, ...others] });
    const ids = res.data!.submitTasks.map((t) => t.id);
    await waitFor("all ordered tasks to succeed", async () => {
      const done = await tdb.db.pool.query("SELECT count(*)::int AS n FROM tasks WHERE id = ANY($1) AND status = 'SUCCEEDED'", [ids]);
      return done.rows[0].n === ids.length;
    }, 30_000);
    const ordered = spans.filter((s) => s.seq < 100).sort((x, y) => x.start - y.start);
    expect(ordered.map((s) => `${s.seq}.${s.attempt}`)).toEqual(["1.1", "2.1", "2.2", "3.1", "4.1", "5.1"]);
    for (let i = 1; i < ordered.length; i++) expect(ordered[i]!.start).toBeGreaterThanOrEqual(ordered[i - 1]!.end);
    expect(spans.filter((s) => s.seq >= 100)).toHaveLength(3);
  }, 60_000);
});
