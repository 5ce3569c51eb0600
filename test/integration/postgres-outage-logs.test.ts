/**
 * What the background apps log while Postgres is unreachable: each repeating
 * failure once with its stack, then (past the 30 s interval) a summary line
 * counting the repeats, and a line when it works again. Postgres is taken
 * away through a TCP proxy, so the shared server keeps running for everyone else.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApp, waitFor, type AppProcess } from "../helpers/app-process.js";
import { freePort } from "../helpers/free-port.js";
import { createTestRedis, type TestRedis } from "../helpers/platform.js";
import { startTcpProxy, type TcpProxy } from "../helpers/tcp-proxy.js";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";

let tdb: TestDatabase;
let testRedis: TestRedis;
let proxy: TcpProxy;

beforeAll(async () => {
  tdb = await createTestDatabase("pgout");
  testRedis = createTestRedis();
  proxy = await startTcpProxy("127.0.0.1", Number(new URL(tdb.url).port || 5432));
});

afterAll(async () => {
  await proxy?.close();
  await testRedis?.cleanup();
  await tdb?.drop();
});

interface Line {
  level: number;
  msg: string;
  loop?: string;
  session?: string;
  err?: { stack?: string };
  suppressed?: number;
}

const linesOf = (app: AppProcess): Line[] =>
  app
    .output()
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Line);

async function start(name: "scheduler" | "worker"): Promise<AppProcess> {
  const port = await freePort();
  const app = startApp(name, {
    DATABASE_URL: proxy.rewrite(tdb.url),
    REDIS_URL: testRedis.url,
    REDIS_KEY_PREFIX: testRedis.prefix,
    METRICS_PORT: String(port),
    LOG_LEVEL: "info",
  });
  await waitFor(`${name} /livez`, async () => (await fetch(`http://127.0.0.1:${port}/livez`)).status === 200, 30_000, 100);
  return app;
}

describe("a Postgres outage", () => {
  it("is logged once per repeating failure, then its recovery, by the scheduler and the worker", async () => {
    const scheduler = await start("scheduler");
    const worker = await start("worker");
    try {
      await proxy.cut();
      // Long enough for every 500 ms-1 s loop to fail several times (unthrottled: ~7 scheduler lines a second).
      await new Promise((r) => setTimeout(r, 5_000));
      const during = { scheduler: linesOf(scheduler), worker: linesOf(worker) };
      await proxy.restore();

      const failed = during.scheduler.filter((l) => l.msg === "scheduler loop failed; retrying");
      const failingLoops = new Set(failed.map((l) => l.loop));
      // The lease loop (every 500 ms) and the 1 s loops all fail, each logged once, with the stack.
      expect(failingLoops).toContain("leases");
      expect(failingLoops).toContain("outbox");
      expect(failed).toHaveLength(failingLoops.size);
      for (const line of failed) expect(line.err?.stack).toMatch(/\n\s+at /);
      const wakeups = during.scheduler.filter((l) => l.msg === "schedule wake-up session lost; polling until it is back");
      expect(wakeups).toHaveLength(1);
      const directory = during.worker.filter((l) => l.msg === "queue directory refresh failed");
      expect(directory).toHaveLength(1);

      // Each loop that failed says so once when it works again.
      await waitFor("every failed loop to recover", () => {
        const recovered = new Set(linesOf(scheduler).filter((l) => l.msg === "scheduler loop recovered").map((l) => l.loop));
        return [...failingLoops].every((loop) => recovered.has(loop));
      }, 20_000, 200);
      await waitFor("the worker's directory to recover", () => linesOf(worker).some((l) => l.msg === "queue directory refresh recovered"), 20_000, 200);
      await waitFor("the wake-up session to recover", () => linesOf(scheduler).some((l) => l.msg === "schedule wake-up session restored"), 20_000, 200);
      const recoveries = linesOf(scheduler).filter((l) => l.msg === "scheduler loop recovered");
      expect(recoveries).toHaveLength(failingLoops.size);
      // The ticks suppressed during the outage are counted on the recovery line.
      expect(recoveries.find((l) => l.loop === "leases")?.suppressed).toBeGreaterThan(0);
    } finally {
      expect(await scheduler.stop()).toBe(0);
      expect(await worker.stop(45_000)).toBe(0);
    }
  }, 90_000);
});
