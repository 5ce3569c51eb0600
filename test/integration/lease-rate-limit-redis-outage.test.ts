/**
 * leaseTasks on a PULL queue with a start rate while Redis is away. The rate
 * is a promise to the tenant's downstream, so the queue leases nothing
 * without tokens; but the call still answers within its bound (QA: it waited
 * on Redis for its tokens for as long as the outage lasted), empty, and
 * leaves every task QUEUED; a queue without a rate leases as usual; once
 * Redis is back the queue leases again. A real gateway process, Redis behind
 * a TCP proxy (as gateway-redis-outage.test.ts).
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../helpers/app-process.js";
import { gql } from "../helpers/platform.js";
import { createTenantVia, printAppLogsOnFailure, startGatewayBehindRedisProxy, type GatewayProcess, type RedisProxiedGateway } from "../helpers/ready-apps.js";
import type { TcpProxy } from "../helpers/tcp-proxy.js";
import type { TestDatabase } from "../helpers/test-database.js";

let tdb: TestDatabase;
let proxy: TcpProxy;
let gateway: GatewayProcess;
let adminToken: string;
let platform: RedisProxiedGateway | undefined;
const apps: GatewayProcess["app"][] = [];

beforeAll(async () => {
  platform = await startGatewayBehindRedisProxy("rlrdout");
  ({ tdb, proxy, gateway, adminToken } = platform);
  apps.push(gateway.app);
});

afterAll(async () => {
  await platform?.stop();
});

type Leases = { leaseToken: string; task: { id: string } }[];

/** One leaseTasks call with a client-side timeout: its leases (or why there are none) and how long it took. */
async function lease(apiKey: string, queue: string, max: number, waitSeconds = 0): Promise<{ ms: number; leases: Leases | string }> {
  const started = Date.now();
  try {
    const res = await fetch(gateway.url, {
      method: "POST",
      signal: AbortSignal.timeout(15_000),
      headers: { "content-type": "application/json", authorization: `Bearer ${apiKey}` },
      body: JSON.stringify({
        query: `mutation ($q: String!, $max: Int, $wait: Float) { leaseTasks(queue: $q, workerId: "w", max: $max, leaseSeconds: 60, waitSeconds: $wait) { leaseToken task { id } } }`,
        variables: { q: queue, max, wait: waitSeconds },
      }),
    });
    const body = (await res.json()) as { data?: { leaseTasks: Leases } | null; errors?: unknown[] };
    return { ms: Date.now() - started, leases: body.data?.leaseTasks ?? `errors: ${JSON.stringify(body.errors)}` };
  } catch (error) {
    return { ms: Date.now() - started, leases: `no answer: ${String(error)}` };
  }
}

const ready = async () => (await fetch(gateway.url.replace("/graphql", "/readyz"))).status;

async function statuses(tenantId: string): Promise<Map<string, string>> {
  const client = new pg.Client({ connectionString: tdb.url });
  await client.connect();
  try {
    const { rows } = await client.query<{ id: string; status: string }>("SELECT id, status::text FROM tasks WHERE tenant_id = $1", [tenantId]);
    return new Map(rows.map((r) => [r.id, r.status]));
  } finally {
    await client.end();
  }
}

describe("a rate-limited PULL queue during a Redis outage", () => {
  printAppLogsOnFailure(apps);

  it("leases nothing from it, answers within the call's bound, leases other queues, and leases again once Redis is back", async () => {
    const { tenantId, apiKey } = await createTenantVia(gateway.url, adminToken, "rated-outage");
    const ok = async (query: string, variables?: Record<string, unknown>) => {
      const res = await gql<Record<string, any>>(gateway.url, query, variables, apiKey);
      expect(res.errors, query).toBeUndefined();
      return res.data as Record<string, any>;
    };
    await ok(`mutation { upsertQueue(input: {name: "rated", mode: PULL, rateLimit: {perSecond: 1, burst: 3}}) { name } }`);
    const rated = (await ok(`mutation { submitTasks(inputs: [${Array.from({ length: 5 }, (_, i) => `{type: "r${i}", queue: "rated", payload: {}}`).join(", ")}]) { id } }`)).submitTasks as { id: string }[];
    const plain = (await ok(`mutation { submitTasks(inputs: [{type: "a", payload: {}}, {type: "b", payload: {}}]) { id } }`)).submitTasks as { id: string }[];

    await proxy.cut();
    await waitFor("the gateway to see Redis down", async () => (await ready()) === 503, 10_000, 100);

    const [once, longPoll, unlimited] = await Promise.all([
      lease(apiKey, "rated", 3),
      lease(apiKey, "rated", 3, 2),
      lease(apiKey, "default", 5),
    ]);
    // Answered, empty: no token, no lease. Bounds far above the look (and the long poll's 2 s) for a loaded machine.
    expect(once.leases).toEqual([]);
    expect(once.ms).toBeLessThan(5_000);
    expect(longPoll.leases).toEqual([]);
    expect(longPoll.ms).toBeLessThan(7_000);
    // A queue without a rate does not ask Redis.
    expect(typeof unlimited.leases === "string" ? unlimited.leases : unlimited.leases.map((l) => l.task.id).sort()).toEqual(plain.map((t) => t.id).sort());
    // Nothing of the rated queue was leased to a call that did not get it.
    const during = await statuses(tenantId);
    expect(rated.map((t) => during.get(t.id))).toEqual(rated.map(() => "QUEUED"));

    await proxy.restore();
    await waitFor("the gateway to see Redis again", async () => (await ready()) === 200, 20_000, 100);
    const after = await lease(apiKey, "rated", 5, 5);
    // Up to the burst (3), whatever the bucket holds now, and at least one.
    expect(typeof after.leases === "string" ? after.leases : after.leases.length).toBeGreaterThanOrEqual(1);
    expect(typeof after.leases === "string" ? 0 : after.leases.length).toBeLessThanOrEqual(3);
    const leasedIds = new Set((after.leases as Leases).map((l) => l.task.id));
    const now = await statuses(tenantId);
    for (const t of rated) expect(now.get(t.id), t.id).toBe(leasedIds.has(t.id) ? "RUNNING" : "QUEUED");
  }, 90_000);
});
