/**
 * A gateway process stopping (SIGTERM) with leaseTasks long polls in flight:
 * each poll ends its wait at once and answers normally (200, empty here),
 * so the HTTP drain finishes in moments instead of cutting the polls with a
 * connection reset at its 10 s grace, and the process exits 0.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestRedis, gql, randomSuffix, type TestRedis } from "../helpers/platform.js";
import { createTenantVia, printAppLogsOnFailure, startGatewayProcess, type GatewayProcess } from "../helpers/ready-apps.js";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";

let tdb: TestDatabase;
let testRedis: TestRedis;
const apps: GatewayProcess["app"][] = [];
const adminToken = `admin-${randomSuffix(16)}`;

beforeAll(async () => {
  tdb = await createTestDatabase("gwstop");
  testRedis = createTestRedis();
});

afterAll(async () => {
  for (const app of apps) app.kill();
  await testRedis?.cleanup();
  await tdb?.drop();
});

describe("gateway SIGTERM", () => {
  printAppLogsOnFailure(apps);

  it("answers in-flight long polls at once, empty, and exits 0", async () => {
    const gateway = await startGatewayProcess({ DATABASE_URL: tdb.url, REDIS_URL: testRedis.url, REDIS_KEY_PREFIX: testRedis.prefix, LOG_LEVEL: "info" }, adminToken);
    apps.push(gateway.app);
    const { apiKey } = await createTenantVia(gateway.url, adminToken, "stopping");
    const ok = await gql(gateway.url, `mutation { upsertQueue(input: {name: "other", mode: PULL}) { name } }`, {}, apiKey);
    expect(ok.errors).toBeUndefined();
    // Two polls on two queues, one leasing ahead (its wait gathers), both well inside their 20 s wait.
    const poll = (queue: string, extra = "") =>
      fetch(gateway.url, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${apiKey}` },
        body: JSON.stringify({ query: `mutation { leaseTasks(queue: "${queue}", workerId: "w", max: 5, waitSeconds: 20${extra}) { task { id } } }` }),
      }).then(
        async (res) => ({ at: Date.now(), status: res.status, body: (await res.json()) as { data?: { leaseTasks: unknown[] }; errors?: unknown[] } }),
        (error: unknown) => ({ at: Date.now(), status: 0, body: { errors: [String(error)] } as { data?: { leaseTasks: unknown[] }; errors?: unknown[] } }),
      );
    const polls = [poll("default"), poll("other", ", startAheadMs: 1000")];
    await new Promise((r) => setTimeout(r, 700));

    const signalled = Date.now();
    gateway.app.child.kill("SIGTERM");
    const answers = await Promise.all(polls);
    const code = await gateway.app.exited;
    const exitedAfter = Date.now() - signalled;

    for (const answer of answers) {
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      expect(answer.body).toEqual({ data: { leaseTasks: [] } });
      // Before: cut with a connection reset at the drain's 10 s grace.
      expect(answer.at - signalled).toBeLessThan(3_000);
    }
    expect(code).toBe(0);
    expect(exitedAfter).toBeLessThan(5_000);
  }, 60_000);
});
