/**
 * PULL work through a Postgres outage: a real gateway process reaches
 * Postgres through a TCP proxy that is cut for 3 s while two SDK pull
 * workers (processes) lease and complete, and a client keeps submitting with
 * idempotency keys, retrying whatever failed. Afterwards every accepted key
 * is exactly one task, every task SUCCEEDED, and a task's handler ran more
 * than once only after an earlier attempt's lease expired.
 */
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot, waitFor, type AppProcess } from "../helpers/app-process.js";
import { createTestRedis, gql, randomSuffix, type TestRedis } from "../helpers/platform.js";
import { createTenantVia, printAppLogsOnFailure, startGatewayProcess, startServingApp, type GatewayProcess, type ProcessTenant } from "../helpers/ready-apps.js";
import { startTcpProxy, type TcpProxy } from "../helpers/tcp-proxy.js";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";

const BEFORE = 60;
const CUT_MS = 3_000;

let tdb: TestDatabase;
let testRedis: TestRedis;
let proxy: TcpProxy;
let gateway: GatewayProcess;
let tenant: ProcessTenant;
const apps: AppProcess[] = [];
const workers: ChildProcess[] = [];

interface WorkerLine {
  event: string;
  taskId?: string;
  attempt?: number;
  code?: string;
}
const lines: WorkerLine[] = [];

function startPullWorker(): ChildProcess {
  const child = spawn(process.execPath, [path.join(repoRoot, "test/fixtures/pull-worker.mjs")], {
    env: { ...process.env, TASKLANE_URL: gateway.url, TASKLANE_API_KEY: tenant.apiKey, LEASE_SECONDS: "5", HOLD_MS: "30" },
    stdio: ["ignore", "pipe", "ignore"],
  });
  let buffer = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    buffer += chunk.toString();
    const parts = buffer.split("\n");
    buffer = parts.pop() ?? "";
    for (const p of parts) if (p.trim()) lines.push(JSON.parse(p) as WorkerLine);
  });
  workers.push(child);
  return child;
}

beforeAll(async () => {
  tdb = await createTestDatabase("durpullcut");
  testRedis = createTestRedis();
  proxy = await startTcpProxy("127.0.0.1", Number(new URL(tdb.url).port || 5432));
  const adminToken = `admin-${randomSuffix(16)}`;
  const env = { REDIS_URL: testRedis.url, REDIS_KEY_PREFIX: testRedis.prefix, LOG_LEVEL: "warn" };
  gateway = await startGatewayProcess({ ...env, DATABASE_URL: proxy.rewrite(tdb.url) }, adminToken);
  apps.push(gateway.app, (await startServingApp("scheduler", { ...env, DATABASE_URL: tdb.url })).app);
  tenant = await createTenantVia(gateway.url, adminToken, "pull-cut");
}, 120_000);

afterAll(async () => {
  for (const w of workers) w.kill("SIGKILL");
  await Promise.all(apps.map((a) => a.stop()));
  await proxy?.close();
  await testRedis?.cleanup();
  await tdb?.drop();
});

/** Submits one keyed task, retrying until the gateway answers with its id; the answers' error codes are tallied. */
async function submitUntilAnswered(key: string, seen: Map<string, number>): Promise<string> {
  for (let i = 0; i < 200; i++) {
    try {
      const res = await gql<{ submitTask: { id: string } }>(gateway.url, `mutation ($i: SubmitTaskInput!) { submitTask(input: $i) { id } }`, { i: { type: "pull", idempotencyKey: key, maxAttempts: 5 } }, tenant.apiKey);
      if (res.data?.submitTask) return res.data.submitTask.id;
      const code = `${res.status} ${res.errors?.[0]?.extensions?.code ?? "?"}`;
      seen.set(code, (seen.get(code) ?? 0) + 1);
    } catch {
      seen.set("network", (seen.get("network") ?? 0) + 1);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`key ${key} never answered`);
}

describe("durability: PULL leases, completions and keyed submissions across a Postgres cut", () => {
  printAppLogsOnFailure(apps);

  it("every key one task, every task SUCCEEDED, a handler run twice only after a lease expired", async () => {
    const seen = new Map<string, number>();
    const answered = new Map<string, string>();
    let keys = 0;
    const submitBatch = async (n: number) => {
      await Promise.all(
        Array.from({ length: n }, async () => {
          const key = `k-${keys++}`;
          answered.set(key, await submitUntilAnswered(key, seen));
        }),
      );
    };
    await submitBatch(BEFORE);
    startPullWorker();
    startPullWorker();
    await waitFor("some tasks done", () => lines.filter((l) => l.event === "finished").length >= 15, 30_000, 20);
    // Submissions keep coming through the cut: these are answered only once Postgres is back.
    const during = submitBatch(20);
    await proxy.cut();
    await new Promise((r) => setTimeout(r, CUT_MS));
    const restoredAt = Date.now();
    await proxy.restore();
    await during;
    await submitBatch(20);
    const ids = [...answered.values()];
    await waitFor(
      "every task SUCCEEDED",
      async () => (await tdb.db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM tasks WHERE id = ANY($1) AND status = 'SUCCEEDED'", [ids])).rows[0]!.n === ids.length,
      60_000,
      100,
    );
    const drainedMs = Date.now() - restoredAt;

    // One task per key, and nothing else was written.
    const tasks = await tdb.db.pool.query<{ id: string; idempotency_key: string }>("SELECT id, idempotency_key FROM tasks");
    expect(tasks.rows.length).toBe(answered.size);
    for (const row of tasks.rows) expect(answered.get(row.idempotency_key)).toBe(row.id);
    // A handler ran again only for an attempt after one whose lease expired.
    const { rows } = await tdb.db.pool.query<{ task_id: string; outcomes: string[] }>(
      "SELECT task_id, array_agg(outcome::text ORDER BY number) AS outcomes FROM task_attempts GROUP BY task_id",
    );
    let duplicates = 0;
    let expired = 0;
    for (const row of rows) {
      expect(row.outcomes.at(-1), row.task_id).toBe("SUCCEEDED");
      expect(row.outcomes.slice(0, -1).every((o) => o === "LEASE_EXPIRED"), `${row.task_id}: ${row.outcomes.join(",")}`).toBe(true);
      expired += row.outcomes.length - 1;
      const runs = lines.filter((l) => l.event === "finished" && l.taskId === row.task_id).length;
      expect(runs, row.task_id).toBeGreaterThanOrEqual(1);
      expect(runs, row.task_id).toBeLessThanOrEqual(row.outcomes.length);
      duplicates += runs - 1;
    }
    expect(rows.length).toBe(answered.size);
    console.log(
      `${answered.size} keyed PULL tasks, Postgres cut ${CUT_MS} ms under the gateway: client saw ${JSON.stringify(Object.fromEntries(seen))}; all SUCCEEDED ${drainedMs} ms after it came back; leases expired ${expired}, handlers run twice ${duplicates}`,
    );
  }, 120_000);
});
