/**
 * What an operator sees when an app starts with a bad environment or without
 * its dependencies: one clear line and exit 1 for configuration it cannot
 * read (every app and migrate); JSON log lines only, liveness, readiness 503
 * and a clean SIGTERM for a worker and scheduler whose Redis is unreachable.
 */
import { spawnSync } from "node:child_process";
import { createServer } from "node:net";
import path from "node:path";
import { normalizeTaskSpec, parseInput, submitTaskInputSchema } from "@tasklane/core";
import { submitTasks } from "@tasklane/db";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { appNodeArgs, repoRoot, startApp, waitFor, type AppName, type AppProcess } from "../helpers/app-process.js";
import { freePort } from "../helpers/free-port.js";
import { seedPushQueue, seedTenant } from "../helpers/seed.js";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";

let tdb: TestDatabase;
const running: AppProcess[] = [];

beforeAll(async () => {
  tdb = await createTestDatabase("startup");
});

afterEach(async () => {
  await Promise.all(running.splice(0).map((a) => a.stop(5_000)));
});

afterAll(async () => {
  await tdb?.drop();
});

/** Runs node with `args` (an app's appNodeArgs, or a script) to its end (bounded), with `env` on top of a clean environment. */
function runToExit(args: string[], env: Record<string, string>) {
  const run = spawnSync(process.execPath, args, {
    env: { PATH: process.env.PATH ?? "", ...env },
    encoding: "utf8",
    timeout: 30_000,
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

const APPS: AppName[] = ["gateway", "scheduler", "worker", "notifier"];
const MIGRATE_CLI = path.join(repoRoot, "packages/db/dist/cli/migrate.js");

describe("invalid configuration", () => {
  const bad = { PORT: "abc", LOG_LEVEL: "loud", DATABASE_URL: "notaurl", ALLOW_PRIVATE_TARGETS: "yes", WEBHOOK_RETRY_SCHEDULE: "x" };

  it.each(APPS)("%s: one line naming every bad variable it reads, exit 1, no stack", (app) => {
    const { status, stdout, stderr } = runToExit(appNodeArgs(app), bad);
    expect(status).toBe(1);
    expect(stdout).toBe("");
    const lines = stderr.trimEnd().split("\n");
    expect(lines).toHaveLength(1);
    const [line] = lines as [string];
    expect(line.startsWith(`tasklane-${app}: invalid configuration: `)).toBe(true);
    expect(line).toContain('DATABASE_URL: expected a URL like postgresql://user@host:5432/tasklane, got "notaurl"');
    expect(line).toContain('LOG_LEVEL: expected one of fatal, error, warn, info, debug, trace, silent, got "loud"');
    expect(line).toContain('ALLOW_PRIVATE_TARGETS: expected 0, 1, true or false, got "yes"');
    if (app === "gateway") expect(line).toContain('PORT: expected an integer from 0 to 65535, got "abc"');
    if (app === "notifier") expect(line).toContain('WEBHOOK_RETRY_SCHEDULE: expected comma-separated non-negative seconds, e.g. 5,30,120, got "x"');
    expect(stderr).not.toMatch(/\n\s+at |node:internal|Node\.js v/);
  });

  it.each([
    ["REDIS_URL", "redis://127.0.0.1:6379/abc", "the DB index (the path) must be an integer from 0 to 15"],
    ["REDIS_URL", "redis://127.0.0.1:6379/99", "DB index 99 is out of range"],
    ["PORT", " ", "expected an integer from 0 to 65535"],
  ])("gateway refuses %s=%j before connecting anywhere", (variable, value, reason) => {
    const { status, stderr } = runToExit(appNodeArgs("gateway"), { DATABASE_URL: tdb.url, [variable]: value });
    expect(status).toBe(1);
    expect(stderr.startsWith(`tasklane-gateway: invalid configuration: ${variable}: ${reason}`)).toBe(true);
    expect(stderr).toContain(`, got ${JSON.stringify(value)}\n`);
    expect(stderr.split("\n").filter(Boolean)).toHaveLength(1);
  });

  it.each(["scheduler", "worker", "notifier"] as const)("%s: one line and exit 1 when METRICS_PORT is taken", async (app) => {
    const port = await freePort();
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(port, resolve));
    try {
      // Redis nowhere: the apps start without it, and no test's Redis is touched.
      const { status, stderr } = runToExit(appNodeArgs(app), { DATABASE_URL: tdb.url, REDIS_URL: "redis://127.0.0.1:1/0", METRICS_PORT: String(port), LOG_LEVEL: "silent" });
      expect(status).toBe(1);
      expect(stderr).toMatch(new RegExp(`^tasklane-${app}: cannot serve METRICS_PORT ${port}: listen EADDRINUSE[^\n]*\n$`));
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it("notifier refuses an empty step in WEBHOOK_RETRY_SCHEDULE", () => {
    const { status, stderr } = runToExit(appNodeArgs("notifier"), { DATABASE_URL: tdb.url, WEBHOOK_RETRY_SCHEDULE: "1,,3" });
    expect(status).toBe(1);
    expect(stderr).toBe('tasklane-notifier: invalid configuration: WEBHOOK_RETRY_SCHEDULE: expected comma-separated non-negative seconds, e.g. 5,30,120, got "1,,3"\n');
  });

  it("migrate: one line for a bad DATABASE_URL and for a server nobody answers on, exit 1", async () => {
    const invalid = runToExit([MIGRATE_CLI], { DATABASE_URL: "notaurl" });
    expect(invalid.status).toBe(1);
    expect(invalid.stderr).toBe('tasklane-migrate: invalid configuration: DATABASE_URL: expected a URL like postgresql://user@host:5432/tasklane, got "notaurl"\n');

    const port = await freePort();
    const unreachable = runToExit([MIGRATE_CLI], { DATABASE_URL: `postgresql://postgres:hunter2@127.0.0.1:${port}/tasklane` });
    expect(unreachable.status).toBe(1);
    expect(unreachable.stderr).toBe(`tasklane-migrate: could not migrate 127.0.0.1:${port}/tasklane (DATABASE_URL): connect ECONNREFUSED 127.0.0.1:${port}\n`);
  });

  it.each(["gateway", "scheduler", "worker", "notifier"])("%s: one line and exit 1 when Postgres cannot be reached at start", async (app) => {
    const port = await freePort();
    const { status, stderr } = runToExit(appNodeArgs(app), { DATABASE_URL: `postgresql://postgres@127.0.0.1:${port}/tasklane` });
    expect(status).toBe(1);
    expect(stderr).toBe(`tasklane-${app}: could not migrate 127.0.0.1:${port}/tasklane (DATABASE_URL): connect ECONNREFUSED 127.0.0.1:${port}\n`);
  });
});

describe("Redis unreachable at start", () => {
  async function startWithoutRedis(name: "worker" | "scheduler") {
    const metricsPort = await freePort();
    const redisPort = await freePort(); // nobody listens there
    const app = startApp(name, {
      DATABASE_URL: tdb.url,
      REDIS_URL: `redis://127.0.0.1:${redisPort}/0`,
      METRICS_PORT: String(metricsPort),
      LOG_LEVEL: "info",
    });
    running.push(app);
    const ops = `http://127.0.0.1:${metricsPort}`;
    await waitFor(`${name} /livez`, async () => (await fetch(`${ops}/livez`)).status === 200, 30_000, 100);
    return { app, ops };
  }

  /** Every line the process wrote is a JSON log line of `app`; no ioredis plain-text dump. */
  function expectJsonLinesOnly(output: string, app: string) {
    expect(output).not.toContain("Unhandled error event");
    const lines = output.split("\n").filter(Boolean);
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(JSON.parse(line), line).toMatchObject({ app, time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
  }

  it("worker: live, not ready, logs the refused connection as JSON (rate-limited) and exits 0 on SIGTERM", async () => {
    const { app, ops } = await startWithoutRedis("worker");
    expect((await fetch(`${ops}/livez`)).status).toBe(200);
    const ready = await fetch(`${ops}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({ status: "unavailable", postgres: "ok", redis: "down" });
    expect((await fetch(`${ops}/metrics`)).status).toBe(200);
    // Reconnects fail several times a second; the log says so once per connection, not per failure.
    await new Promise((r) => setTimeout(r, 2_000));
    running.splice(running.indexOf(app), 1);
    const stoppedAt = Date.now();
    expect(await app.stop(20_000)).toBe(0);
    expect(Date.now() - stoppedAt).toBeLessThan(5_000);
    const output = app.output();
    expectJsonLinesOnly(output, "worker");
    expect(output.match(/"msg":"redis connection error"/g)).toHaveLength(2); // its command and subscriber connections
    expect(output).toContain('"code":"ECONNREFUSED"');
    expect(output).toContain('"msg":"worker stopped"');
  }, 60_000);

  it("scheduler: logs the refused connection as JSON, not ioredis's plain-text dump, and leaves the outbox alone meanwhile", async () => {
    // PUSH tasks whose outbox row waits for a scheduler: without Redis it must not claim them only to fail each second.
    const { tenantId } = await seedTenant(tdb.db);
    await seedPushQueue(tdb.db, tenantId, "hooks", "http://127.0.0.1:9/never");
    const spec = normalizeTaskSpec(parseInput(submitTaskInputSchema, { type: "waits", queue: "hooks" }), Date.now());
    await submitTasks(tdb.db, tenantId, [spec, spec], { horizonMs: 60_000 });
    const { app, ops } = await startWithoutRedis("scheduler");
    expect((await fetch(`${ops}/readyz`)).status).toBe(503);
    await new Promise((r) => setTimeout(r, 3_000));
    // Its SIGTERM with Redis gone ends at the shutdown deadline (app-lifecycle.test.ts); only the log matters here.
    running.splice(running.indexOf(app), 1);
    app.kill("SIGKILL");
    await app.exited;
    const output = app.output();
    expectJsonLinesOnly(output, "scheduler");
    expect(output.match(/"msg":"redis connection error"/g)).toHaveLength(1);
    expect(output).not.toContain('"loop":"outbox"');
    expect((await tdb.db.pool.query("SELECT count(*)::int AS n FROM outbox WHERE kind = 'DISPATCH_TASK'")).rows[0].n).toBeGreaterThan(0);
  }, 60_000);
});
