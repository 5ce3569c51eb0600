/**
 * A crash of any app (an exception nobody caught, a rejection nobody handled)
 * is one JSON log line like every other, fatal, with the error's message and
 * stack, and the process exits 1 so its orchestrator restarts it. The crash is
 * injected by a preloaded fixture (test/fixtures/crash-on-signal.mjs) into
 * the apps as production runs them (dist/bundle/main.js).
 */
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot, type AppProcess } from "../helpers/app-process.js";
import { createTestRedis, randomSuffix, type TestRedis } from "../helpers/platform.js";
import { startGatewayProcess, startServingApp } from "../helpers/ready-apps.js";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";

let tdb: TestDatabase;
let testRedis: TestRedis;
const started: AppProcess[] = [];

beforeAll(async () => {
  tdb = await createTestDatabase("opscrash");
  testRedis = createTestRedis();
}, 60_000);

afterAll(async () => {
  for (const app of started) app.kill();
  await Promise.all(started.map((a) => a.exited));
  await testRedis?.cleanup();
  await tdb?.drop();
}, 60_000);

const CASES = [
  { app: "gateway", kind: "reject" },
  { app: "scheduler", kind: "throw" },
  { app: "worker", kind: "reject" },
  { app: "notifier", kind: "throw" },
] as const;

describe("a crashing app", () => {
  it.each(CASES)("$app ($kind): one fatal JSON line with the error, then exit 1", async ({ app, kind }) => {
    const env = {
      DATABASE_URL: tdb.url,
      REDIS_URL: testRedis.url,
      REDIS_KEY_PREFIX: testRedis.prefix,
      LOG_LEVEL: "info",
      CRASH_KIND: kind,
      NODE_OPTIONS: `--import=${path.join(repoRoot, "test/fixtures/crash-on-signal.mjs")}`,
    };
    const proc = app === "gateway" ? (await startGatewayProcess(env, `admin-${randomSuffix(16)}`)).app : (await startServingApp(app, env)).app;
    started.push(proc);
    proc.kill("SIGUSR2");
    expect(await proc.exited).toBe(1);
    const lines = proc.output().split("\n").filter((l) => l.trim() !== "");
    const notJson = lines.filter((l) => {
      try {
        return typeof JSON.parse(l) !== "object";
      } catch {
        return true;
      }
    });
    expect(notJson).toEqual([]);
    const last = JSON.parse(lines[lines.length - 1] as string) as { level: number; app: string; msg: string; origin: string; err: { message: string; stack: string } };
    expect(last).toMatchObject({ level: 60, app, origin: kind === "reject" ? "unhandledRejection" : "uncaughtException" });
    expect(last.msg).toMatch(/^crashed: /);
    expect(last.err.message).toBe(`crash fixture (${kind})`);
    expect(last.err.stack).toContain("crash-on-signal.mjs");
  });
});
