/**
 * The README's quick start, as a new user meets it: the platform `npm start`
 * runs after its build (scripts/start-platform.mjs) on a database that does
 * not exist yet and with no ADMIN_TOKEN set, then the README's own curl
 * session — its GraphQL documents are read from README.md, so the test fails
 * when the README and the API drift apart — then the console's sign-in page,
 * then one SIGTERM (what Ctrl-C sends) stopping every app, with a PUSH attempt
 * in flight that needs longer than npm start's grace once was.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifySignature } from "@tasklane/core";
import { repoRoot, waitFor } from "../helpers/app-process.js";
import { freePort, freePorts } from "../helpers/free-port.js";
import { startReceiver, type HttpReceiver } from "../helpers/http-receiver.js";
import { createTestRedis, gql, type TestRedis } from "../helpers/platform.js";
import { databaseExists, databaseUrl, dropDatabase } from "../helpers/test-database.js";

/** The endpoint the README's queue names; the test's own receiver stands in for it. */
const README_ENDPOINT = "https://example.com/tasks";

/** The GraphQL documents of the README's "A session with curl", in order. */
function readmeSession(): string[] {
  const readme = readFileSync(path.join(repoRoot, "README.md"), "utf8");
  const start = readme.indexOf("## A session with curl");
  expect(start, "README.md has a curl session").toBeGreaterThan(-1);
  const section = readme.slice(start, readme.indexOf("\n## ", start + 1));
  // Each document is a JSON string inside the curl body: `"query": "…"`.
  return [...section.matchAll(/"query": ("(?:[^"\\]|\\.)*")/g)].map((m) => JSON.parse(m[1] as string) as string);
}

let platform: ChildProcess;
let output = "";
let exited: Promise<number | null>;
let receiver: HttpReceiver;
let redis: TestRedis;
let databaseName = "";
let gatewayPort = 0;
let consolePort = 0;
let metricsPort = 0;

/** One GraphQL call to the platform's gateway; GraphQL errors fail the test with their message. */
async function call<T>(query: string, token: string): Promise<T> {
  const res = await gql<T>(`http://127.0.0.1:${gatewayPort}/graphql`, query, undefined, token);
  if (res.errors) throw new Error(`GraphQL errors: ${JSON.stringify(res.errors)}`);
  return res.data as T;
}

beforeAll(async () => {
  receiver = await startReceiver((_req, res) => {
    res.writeHead(200, { "content-type": "application/json" }).end('{"sent":true}');
  });
  redis = createTestRedis(0);
  databaseName = `tl_test_quickstart_${randomBytes(4).toString("hex")}`;
  gatewayPort = await freePort();
  consolePort = await freePort();
  metricsPort = await freePorts(3);

  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: databaseUrl(databaseName),
    REDIS_URL: redis.url,
    REDIS_KEY_PREFIX: redis.prefix,
    PORT: String(gatewayPort),
    CONSOLE_PORT: String(consolePort),
    // The README: loopback targets need this.
    ALLOW_PRIVATE_TARGETS: "1",
    LOG_LEVEL: "warn",
    // As the README's table offers it: one variable, and every background app serves its metrics.
    METRICS_PORT: String(metricsPort),
  };
  // As on a fresh machine: the token is generated and printed once.
  delete env.ADMIN_TOKEN;
  for (const name of ["TASKLANE_API_URL", "NEXTAUTH_SECRET", "NEXTAUTH_URL", "OTEL_EXPORTER_OTLP_ENDPOINT"]) delete env[name];
  platform = spawn(process.execPath, [path.join(repoRoot, "scripts", "start-platform.mjs")], { cwd: repoRoot, env, stdio: ["ignore", "pipe", "pipe"] });
  const append = (chunk: Buffer) => {
    output += chunk.toString();
  };
  platform.stdout?.on("data", append);
  platform.stderr?.on("data", append);
  exited = new Promise((resolve) => platform.once("exit", (code) => resolve(code)));
});

afterAll(async () => {
  if (platform && platform.exitCode === null && platform.signalCode === null) {
    platform.kill("SIGTERM");
    const timer = setTimeout(() => platform.kill("SIGKILL"), 20_000);
    await exited;
    clearTimeout(timer);
  }
  await receiver?.close();
  await redis?.cleanup();
  if (databaseName) await dropDatabase(databaseName);
});

/** How long the slow endpoint takes: past npm start's old 15 s SIGKILL, inside the worker's 30 s drain. */
const SLOW_ENDPOINT_MS = 20_000;

describe("the README's quick start", () => {
  let adminToken = "";
  let tenantKey = "";

  it("starts every app on a database it creates, printing the generated admin token once", async () => {
    expect(await databaseExists(databaseName)).toBe(false);
    adminToken = await waitFor("the generated ADMIN_TOKEN line", () => /ADMIN_TOKEN=(\S+) \(generated; set ADMIN_TOKEN to choose your own\)/.exec(output)?.[1], 90_000, 100);
    await waitFor("the gateway's /healthz", async () => (await fetch(`http://127.0.0.1:${gatewayPort}/healthz`).catch(() => null))?.ok === true, 90_000, 100);
    expect(output).toContain("[platform] started gateway, scheduler, worker, notifier, console");
    expect(output).toContain(`[platform] metrics: scheduler on ${metricsPort}, worker on ${metricsPort + 1}, notifier on ${metricsPort + 2}`);
    for (const [i, app] of ["scheduler", "worker", "notifier"].entries()) {
      const metrics = await waitFor(`the ${app}'s /metrics`, async () => {
        const res = await fetch(`http://127.0.0.1:${metricsPort + i}/metrics`).catch(() => null);
        return res?.ok ? res.text() : null;
      }, 30_000, 100);
      expect({ app, labelled: metrics.includes(`app="${app}"`) }).toEqual({ app, labelled: true });
    }
    expect(output.match(/ADMIN_TOKEN=/g)).toHaveLength(1);
    expect(await databaseExists(databaseName)).toBe(true);
  }, 120_000);

  it("runs the README's curl session: tenant, PUSH queue, a task POSTed signed, its history", async () => {
    const session = readmeSession();
    expect(session.map((q) => /^(?:mutation|query) \{ (\w+)/.exec(q)?.[1])).toEqual(["createTenant", "upsertQueue", "submitTask", "task"]);
    const [createTenant, upsertQueue, submitTask, readTask] = session as [string, string, string, string];

    const created = await call<{ createTenant: { tenant: { id: string }; apiKey: string; signingSecret: string } }>(createTenant, adminToken);
    const { apiKey, signingSecret } = created.createTenant;
    expect(apiKey).toMatch(/^tl_/);
    tenantKey = apiKey;

    expect(upsertQueue).toContain(README_ENDPOINT);
    const queue = await call<{ upsertQueue: { name: string; mode: string } }>(upsertQueue.replace(README_ENDPOINT, `${receiver.url}/tasks`), apiKey);
    expect(queue.upsertQueue).toEqual({ name: "emails", mode: "PUSH" });

    const submitted = await call<{ submitTask: { id: string; status: string; runAt: string } }>(submitTask, apiKey);
    const taskId = submitted.submitTask.id;
    expect(taskId).toMatch(/^task_/);

    type TaskView = {
      status: string;
      attempts: number;
      result: unknown;
      lastError: string | null;
      attemptHistory: { number: number; outcome: string | null; error: string | null }[];
      events: { previousStatus: string | null; status: string; attempt: number; actor: string; at: string }[];
    };
    expect(readTask).toContain('"task_..."');
    const read = async () => (await call<{ task: TaskView }>(readTask.replace('"task_..."', JSON.stringify(taskId)), apiKey)).task;
    await read(); // a document the API refuses fails here, not at the deadline below
    const task = await waitFor(`task ${taskId} to succeed`, async () => {
      const t = await read();
      return t.status === "SUCCEEDED" ? t : null;
    }, 60_000, 100);
    expect(task).toMatchObject({ attempts: 1, result: { sent: true }, lastError: null, attemptHistory: [{ number: 1, outcome: "SUCCEEDED", error: null }] });
    expect(task.events.map((e) => [e.previousStatus, e.status])).toEqual([[null, "QUEUED"], ["QUEUED", "RUNNING"], ["RUNNING", "SUCCEEDED"]]);

    // What the README says the endpoint receives.
    expect(receiver.requests).toHaveLength(1);
    const [request] = receiver.requests;
    expect(request?.path).toBe("/tasks");
    expect(request?.json).toEqual({ taskId, type: "welcome-email", payload: { to: "ada@example.com" }, attempt: 1 });
    expect(request?.headers["idempotency-key"]).toBe(taskId);
    const headers = Object.fromEntries(Object.entries(request?.headers ?? {}).map(([k, v]) => [k, String(v)]));
    const nowSeconds = Math.floor(Date.now() / 1000);
    expect(verifySignature({ secrets: [signingSecret], headers, body: request?.body ?? "", nowSeconds })).toBe(true);
    expect(verifySignature({ secrets: [signingSecret], headers, body: `${request?.body} `, nowSeconds })).toBe(false);
  });

  it("serves the console's sign-in page", async () => {
    const page = await waitFor("the console", async () => {
      const res = await fetch(`http://127.0.0.1:${consolePort}/`).catch(() => null);
      return res?.ok ? res : null;
    }, 90_000, 200);
    expect(new URL(page.url).pathname).toBe("/signin");
    expect(await page.text()).toContain("Sign in to the console");
  }, 120_000);

  it("stops every app on one SIGTERM and exits 0, after the worker's PUSH attempt in flight is done and recorded", async () => {
    receiver.respond(async (req, res) => {
      if (req.path === "/slow") await new Promise((r) => setTimeout(r, SLOW_ENDPOINT_MS));
      res.writeHead(200, { "content-type": "application/json" }).end('{"sent":true}');
    });
    await call(`mutation { upsertQueue(input: {name: "slow", mode: PUSH, endpointUrl: "${receiver.url}/slow"}) { name } }`, tenantKey);
    const { submitTask } = await call<{ submitTask: { id: string } }>(`mutation { submitTask(input: {type: "slow", queue: "slow", payload: {}}) { id } }`, tenantKey);
    await waitFor("the slow request to arrive", () => receiver.requests.some((r) => r.path === "/slow"), 30_000, 50);

    const stoppedAt = Date.now();
    platform.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(Date.now() - stoppedAt).toBeGreaterThan(SLOW_ENDPOINT_MS - 5_000);
    expect(output).toContain("[platform] SIGTERM received; stopping all apps");
    // Every app stopped by itself: none was killed, so the attempt's outcome was recorded.
    expect(output).not.toContain("sending SIGKILL");
    const db = new pg.Client({ connectionString: databaseUrl(databaseName) });
    await db.connect();
    try {
      const { rows } = await db.query<{ status: string }>("SELECT status FROM tasks WHERE id = $1", [submitTask.id]);
      expect(rows).toEqual([{ status: "SUCCEEDED" }]);
    } finally {
      await db.end();
    }
    const refused = async (port: number) => (await fetch(`http://127.0.0.1:${port}/`).then(() => false, () => true));
    expect(await refused(gatewayPort)).toBe(true);
    expect(await refused(consolePort)).toBe(true);
  }, 120_000);
});
