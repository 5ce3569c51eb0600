/**
 * A tenant's share of a PUSH worker's slots, with a real worker process: a
 * tenant alone fills every slot, and another tenant's task starts beside
 * them while the first tenant's endpoint still holds every request it got
 * (requests cannot be taken back, so a rule that only decided who gets the
 * next free slot left the second tenant waiting for those requests to end).
 */
import type { ServerResponse } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApp, waitFor, type AppProcess } from "../helpers/app-process.js";
import { startReceiver, type HttpReceiver } from "../helpers/http-receiver.js";
import { createTenant, createTestDatabase, createTestRedis, gql, startGateway, type CreatedTenant, type StartedGateway, type TestDatabase, type TestRedis } from "../helpers/platform.js";

const SLOTS = 8;

let tdb: TestDatabase;
let redis: TestRedis;
let gateway: StartedGateway;
let receiver: HttpReceiver;
const apps: AppProcess[] = [];
let env: Record<string, string>;

/** Requests to /slow wait here until the test releases them; after that /slow answers at once. */
let held: ServerResponse[] = [];
let releasedAt: number | null = null;

function releaseSlow(): void {
  releasedAt ??= Date.now();
  for (const res of held) res.writeHead(200).end("{}");
  held = [];
}

const as = (t: CreatedTenant) => <T = Record<string, unknown>>(q: string, v?: Record<string, unknown>) => gql<T>(gateway.url, q, v, t.apiKey);

async function tenantWithQueue(name: string, path: string): Promise<CreatedTenant> {
  const t = await createTenant(gateway, name);
  const res = await as(t)(`mutation ($i: UpsertQueueInput!) { upsertQueue(input: $i) { name } }`, {
    i: { name: "work", mode: "PUSH", endpointUrl: `${receiver.url}${path}` },
  });
  expect(res.errors).toBeUndefined();
  return t;
}

async function submit(t: CreatedTenant, n: number, type: string): Promise<string[]> {
  // Long timeouts: the held requests must outlast the test's wait for the other tenant's task.
  const inputs = Array.from({ length: n }, () => ({ type, queue: "work", timeoutSeconds: 300 }));
  const res = await as(t)<{ submitTasks: { id: string }[] }>(`mutation ($i: [SubmitTaskInput!]!) { submitTasks(inputs: $i) { id } }`, { i: inputs });
  if (!res.data) throw new Error(JSON.stringify(res.errors));
  return res.data.submitTasks.map((x) => x.id);
}

const succeeded = async (ids: string[]) =>
  Number((await tdb.db.pool.query("SELECT count(*) AS n FROM tasks WHERE id = ANY($1) AND status = 'SUCCEEDED'", [ids])).rows[0].n);

const requestsTo = (path: string) => receiver.requests.filter((r) => r.path === path);

beforeAll(async () => {
  tdb = await createTestDatabase("slotshare");
  redis = createTestRedis();
  receiver = await startReceiver((req, res) => {
    if (req.path === "/slow" && releasedAt === null) {
      held.push(res);
      return;
    }
    res.writeHead(200).end("{}");
  });
  gateway = await startGateway({ databaseUrl: tdb.url, redis, env: { ALLOW_PRIVATE_TARGETS: "1" } });
  env = { DATABASE_URL: tdb.url, REDIS_URL: redis.url, REDIS_KEY_PREFIX: redis.prefix, ALLOW_PRIVATE_TARGETS: "1", LOG_LEVEL: "warn" };
  apps.push(startApp("scheduler", env));
});

afterAll(async () => {
  releaseSlow();
  await Promise.all(apps.map((a) => a.stop()));
  await gateway?.close();
  await receiver?.close();
  await redis?.cleanup();
  await tdb?.drop();
});

describe("slot shares on a PUSH worker", () => {
  it("lets a lone tenant fill every slot, and starts another tenant's task while the first one's slow endpoint holds them all", async () => {
    const slow = await tenantWithQueue("slow", "/slow");
    const quick = await tenantWithQueue("quick", "/quick");
    const slowIds = await submit(slow, 3 * SLOTS, "flood");
    const worker = startApp("worker", { ...env, WORKER_CONCURRENCY: String(SLOTS) });
    apps.push(worker);
    try {
      // Alone, the slow tenant takes the whole worker (work-conserving), and no more than it.
      await waitFor("the slow tenant to fill every slot", () => held.length === SLOTS, 30_000, 20);
      await new Promise((r) => setTimeout(r, 1_000));
      expect(requestsTo("/slow")).toHaveLength(SLOTS);

      const [quickId] = await submit(quick, 1, "next");
      // Before the fix this waited for the held requests to end (here: until they are released below).
      const quickRequest = await waitFor("the quick tenant's task to reach its endpoint", () => requestsTo("/quick")[0], 15_000, 20);
      expect(releasedAt).toBeNull();
      expect(held).toHaveLength(SLOTS);
      expect((quickRequest.json as { taskId: string }).taskId).toBe(quickId);
      // The slow tenant, past its share now, started nothing more meanwhile.
      expect(requestsTo("/slow")).toHaveLength(SLOTS);
    } finally {
      releaseSlow();
    }
    await waitFor("every task to finish", async () => (await succeeded(slowIds)) === slowIds.length, 60_000, 200);
    await worker.stop();
    apps.splice(apps.indexOf(worker), 1);
  }, 120_000);
});
