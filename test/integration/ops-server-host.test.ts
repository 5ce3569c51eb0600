/**
 * METRICS_HOST: the background apps' ops server listens where it is told
 * (unset: every interface, which the other tests reach on 127.0.0.1). Bound
 * to 127.0.0.2, it answers there and refuses 127.0.0.1 (both loopback on Linux,
 * so the test needs no second network interface).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApp, waitFor, type AppName } from "../helpers/app-process.js";
import { freePort } from "../helpers/free-port.js";
import { createTestRedis, type TestRedis } from "../helpers/platform.js";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";

let tdb: TestDatabase;
let testRedis: TestRedis;

beforeAll(async () => {
  tdb = await createTestDatabase("opshost");
  testRedis = createTestRedis();
});

afterAll(async () => {
  await testRedis?.cleanup();
  await tdb?.drop();
});

const refused = (url: string) =>
  fetch(url).then(
    () => false,
    (error: unknown) => error instanceof TypeError && (error.cause as { code?: string } | undefined)?.code === "ECONNREFUSED",
  );

describe("METRICS_HOST", () => {
  it.each<AppName>(["scheduler", "worker", "notifier"])("binds the %s's ops server to that address only", async (name) => {
    const port = await freePort();
    const app = startApp(name, {
      DATABASE_URL: tdb.url,
      REDIS_URL: testRedis.url,
      REDIS_KEY_PREFIX: testRedis.prefix,
      METRICS_PORT: String(port),
      METRICS_HOST: "127.0.0.2",
      LOG_LEVEL: "warn",
    });
    try {
      await waitFor(`${name} /livez on 127.0.0.2`, async () => (await fetch(`http://127.0.0.2:${port}/livez`)).status === 200, 30_000, 100);
      expect((await fetch(`http://127.0.0.2:${port}/metrics`)).status).toBe(200);
      expect(await refused(`http://127.0.0.1:${port}/livez`)).toBe(true);
    } finally {
      expect(await app.stop(45_000)).toBe(0);
    }
  }, 60_000);
});
