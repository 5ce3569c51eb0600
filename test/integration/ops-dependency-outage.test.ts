/**
 * What an orchestrator sees from each app's probes while Postgres or Redis
 * is away: gateway, scheduler, worker and notifier as production runs them,
 * each reaching Postgres and Redis through TCP proxies the test cuts, hangs
 * and restores (the shared servers stay up for everyone else).
 *
 * Liveness (/livez, and /healthz on the background apps) must stay 200, or
 * Kubernetes restarts every pod during a dependency blip; readiness (/readyz,
 * and the gateway's contract /healthz) must say 503, naming what is down, and
 * answer within the probes' 2 s timeout even when a server accepts
 * connections and never answers. Both come back by themselves.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SHUTDOWN_DEADLINE_MS } from "@tasklane/config/shutdown-deadlines";
import { waitFor, type AppProcess } from "../helpers/app-process.js";
import { createTestRedis, randomSuffix, type TestRedis } from "../helpers/platform.js";
import { printAppLogsOnFailure, startGatewayProcess, startServingApp } from "../helpers/ready-apps.js";
import { startTcpProxy, type TcpProxy } from "../helpers/tcp-proxy.js";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";

type App = "gateway" | "scheduler" | "worker" | "notifier";

let tdb: TestDatabase;
let testRedis: TestRedis;
let pgProxy: TcpProxy;
let redisProxy: TcpProxy;
const apps: AppProcess[] = [];
const base = new Map<App, string>();

/** The kubelet's probe timeout in infra/k8s. */
const PROBE_TIMEOUT_MS = 2_000;

async function probe(app: App, path: string): Promise<{ status: number; body: Record<string, string>; ms: number }> {
  const started = Date.now();
  const res = await fetch(`${base.get(app)}${path}`, { signal: AbortSignal.timeout(10_000) });
  const text = await res.text();
  return { status: res.status, body: text.startsWith("{") ? (JSON.parse(text) as Record<string, string>) : {}, ms: Date.now() - started };
}

/** Every app's answers to its liveness and readiness paths, all at once. */
async function probeAll() {
  const paths: Record<App, string[]> = {
    gateway: ["/livez", "/healthz", "/readyz"],
    scheduler: ["/livez", "/healthz", "/readyz"],
    worker: ["/livez", "/healthz", "/readyz"],
    notifier: ["/livez", "/healthz", "/readyz"],
  };
  const entries = Object.entries(paths).flatMap(([app, list]) => list.map((path) => ({ app: app as App, path })));
  const answers = await Promise.all(entries.map(async ({ app, path }) => ({ key: `${app} ${path}`, ...(await probe(app, path)) })));
  return new Map(answers.map((a) => [a.key, a]));
}

/** Every line an app printed, parsed: a line that is not one JSON object fails the test. */
const logLines = (app: AppProcess) =>
  app
    .output()
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as { level: number; msg: string });

const statuses = (answers: Awaited<ReturnType<typeof probeAll>>) => Object.fromEntries([...answers].map(([key, a]) => [key, a.status]));

const LIVE = { "gateway /livez": 200, "scheduler /livez": 200, "scheduler /healthz": 200, "worker /livez": 200, "worker /healthz": 200, "notifier /livez": 200, "notifier /healthz": 200 };
const ALL_READY = { ...LIVE, "gateway /healthz": 200, "gateway /readyz": 200, "scheduler /readyz": 200, "worker /readyz": 200, "notifier /readyz": 200 };

async function allReady(): Promise<void> {
  let last: Record<string, number> = {};
  const same = (got: Record<string, number>) => Object.entries(ALL_READY).every(([key, status]) => got[key] === status);
  try {
    await waitFor("every app ready again", async () => same((last = statuses(await probeAll()))), 60_000, 250);
  } catch (error) {
    throw new Error(`not ready again: ${JSON.stringify(Object.fromEntries(Object.entries(last).filter(([key, status]) => status !== ALL_READY[key as keyof typeof ALL_READY])))}`, { cause: error });
  }
}

beforeAll(async () => {
  tdb = await createTestDatabase("opsoutage");
  testRedis = createTestRedis();
  pgProxy = await startTcpProxy("127.0.0.1", Number(new URL(tdb.url).port || 5432));
  redisProxy = await startTcpProxy("127.0.0.1", Number(new URL(testRedis.url).port || 6379));
  const env = {
    DATABASE_URL: pgProxy.rewrite(tdb.url),
    REDIS_URL: redisProxy.rewrite(testRedis.url),
    REDIS_KEY_PREFIX: testRedis.prefix,
    LOG_LEVEL: "warn",
    // A hung server is noticed in 3 s rather than 10 / 30 (the defaults): the probes must not wait for it anyway.
    REDIS_SOCKET_TIMEOUT_SECONDS: "3",
    DATABASE_QUERY_TIMEOUT_SECONDS: "3",
  };
  const gateway = await startGatewayProcess(env, `admin-${randomSuffix(16)}`);
  apps.push(gateway.app);
  base.set("gateway", gateway.url.replace(/\/graphql$/, ""));
  for (const name of ["scheduler", "worker", "notifier"] as const) {
    const { app, port } = await startServingApp(name, env);
    apps.push(app);
    base.set(name, `http://127.0.0.1:${port}`);
  }
}, 180_000);

afterAll(async () => {
  await pgProxy?.restore();
  await redisProxy?.restore();
  await Promise.all(apps.map((a) => a.stop(45_000)));
  await pgProxy?.close();
  await redisProxy?.close();
  await testRedis?.cleanup();
  await tdb?.drop();
}, 120_000);

describe("probes during a dependency outage", () => {
  printAppLogsOnFailure(apps);

  it("all ready with Postgres and Redis up", async () => {
    expect(statuses(await probeAll())).toEqual(ALL_READY);
  });

  it("Redis refused: liveness 200 everywhere; gateway, scheduler and worker not ready, naming redis; the notifier (Postgres only) ready", async () => {
    await redisProxy.cut();
    try {
      await waitFor("readiness sees Redis gone", async () => (await probe("worker", "/readyz")).status === 503, 15_000, 200);
      const answers = await probeAll();
      expect(statuses(answers)).toEqual({ ...LIVE, "gateway /healthz": 503, "gateway /readyz": 503, "scheduler /readyz": 503, "worker /readyz": 503, "notifier /readyz": 200 });
      for (const app of ["gateway", "scheduler", "worker"] as const) expect(answers.get(`${app} /readyz`)?.body, app).toMatchObject({ postgres: "ok", redis: "down" });
      for (const a of answers.values()) expect(a.ms).toBeLessThan(PROBE_TIMEOUT_MS);
      // What the operator reads meanwhile: one JSON warning per connection, in every app.
      for (const app of apps) {
        await waitFor(`${app.name} logs the Redis outage`, () => logLines(app).some((l) => l.msg === "redis connection error" && l.level === 40), 15_000, 200);
      }
    } finally {
      await redisProxy.restore();
    }
    await allReady();
  });

  it("Postgres refused: liveness 200 everywhere, every readiness 503 naming postgres", async () => {
    await pgProxy.cut();
    try {
      await waitFor("readiness sees Postgres gone", async () => (await probe("notifier", "/readyz")).status === 503, 15_000, 200);
      const answers = await probeAll();
      expect(statuses(answers)).toEqual({ ...LIVE, "gateway /healthz": 503, "gateway /readyz": 503, "scheduler /readyz": 503, "worker /readyz": 503, "notifier /readyz": 503 });
      for (const app of ["gateway", "scheduler", "worker", "notifier"] as const) expect(answers.get(`${app} /readyz`)?.body.postgres, app).toBe("down");
      for (const a of answers.values()) expect(a.ms).toBeLessThan(PROBE_TIMEOUT_MS);
    } finally {
      await pgProxy.restore();
    }
    await allReady();
  });

  it("Postgres and Redis hung (connections accepted, never answered): liveness 200 at once, readiness 503 within the probe timeout", async () => {
    await Promise.all([pgProxy.hang(), redisProxy.hang()]);
    try {
      // Several probe rounds: a check that waits on a hung connection must not pile up or slow the next answer.
      for (let round = 0; round < 3; round++) {
        const answers = await probeAll();
        const got = statuses(answers);
        for (const [key, status] of Object.entries(LIVE)) expect(got[key], key).toBe(status);
        for (const key of ["gateway /healthz", "gateway /readyz", "scheduler /readyz", "worker /readyz", "notifier /readyz"]) expect(got[key], key).toBe(503);
        for (const [key, a] of answers) expect(a.ms, key).toBeLessThan(PROBE_TIMEOUT_MS);
      }
    } finally {
      await Promise.all([pgProxy.restore(), redisProxy.restore()]);
    }
    await allReady();
  }, 120_000);

  it("Postgres connections silenced (lost without a reset): probes answer within the timeout, and every app is ready again on new connections", async () => {
    // Warm every app's pool (concurrent readiness checks each take a connection), so idle connections are there to go silent.
    await Promise.all((["gateway", "scheduler", "worker", "notifier"] as const).flatMap((app) => Array.from({ length: 30 }, () => probe(app, "/readyz"))));
    // Every open connection goes silent; new ones go through, as after a failover or a NAT that forgot its flows.
    pgProxy.silence();
    for (let round = 0; round < 3; round++) {
      const answers = await probeAll();
      const got = statuses(answers);
      for (const [key, status] of Object.entries(LIVE)) expect(got[key], key).toBe(status);
      for (const [key, a] of answers) expect(a.ms, key).toBeLessThan(PROBE_TIMEOUT_MS);
    }
    const started = Date.now();
    await allReady();
    // The scheduler and worker drop a connection after DATABASE_QUERY_TIMEOUT_SECONDS (3 here); no app may take much longer.
    expect(Date.now() - started).toBeLessThan(20_000);
  }, 120_000);

  it("logged nothing but JSON lines through every outage", () => {
    for (const app of apps) expect(() => logLines(app), app.name).not.toThrow();
  });

  it("SIGTERM while Postgres and Redis hang: each app exits by itself within its shutdown deadline, logging JSON only", async () => {
    await Promise.all([pgProxy.hang(), redisProxy.hang()]);
    // Work that waits on them: a submission and readiness probes in flight when the signal comes.
    void fetch(`${base.get("gateway")}/graphql`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"query":"{ queues { name } }"}' }).catch(() => undefined);
    for (const app of ["gateway", "scheduler", "worker", "notifier"] as const) void probe(app, "/readyz").catch(() => undefined);
    await new Promise((r) => setTimeout(r, 300));
    const deadlines: Record<string, number> = SHUTDOWN_DEADLINE_MS;
    const exits = await Promise.all(
      apps.map(async (app) => {
        const started = Date.now();
        app.kill("SIGTERM");
        const code = await app.exited;
        return { app: app.name, code, ms: Date.now() - started };
      }),
    );
    for (const { app, code, ms } of exits) {
      // 0 when the drain finished, 1 when the deadline cut it short; never a kill from outside.
      expect([0, 1], `${app} exit code`).toContain(code);
      expect(ms, `${app} stopped after ${ms} ms`).toBeLessThan((deadlines[app] as number) + 3_000);
    }
    for (const app of apps) expect(() => logLines(app), app.name).not.toThrow();
  }, 120_000);
});
