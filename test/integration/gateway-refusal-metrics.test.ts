/**
 * tasklane_api_requests_total counts the requests refused before execution
 * (while their context is created: the API rate limit, Postgres unreachable),
 * on the plain-POST fast path and on Express's path alike, with the code the
 * client got and operation="none". Postgres is taken away through a TCP proxy.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTenant, createTestRedis, startGateway, waitFor, type StartedGateway, type TestRedis } from "../helpers/platform.js";
import { sampleValue } from "../helpers/prometheus-text.js";
import { startTcpProxy, type TcpProxy } from "../helpers/tcp-proxy.js";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";

let tdb: TestDatabase;
let testRedis: TestRedis;
let proxy: TcpProxy;
let gateway: StartedGateway;

beforeAll(async () => {
  tdb = await createTestDatabase("gwref");
  testRedis = createTestRedis();
  proxy = await startTcpProxy("127.0.0.1", Number(new URL(tdb.url).port || 5432));
  gateway = await startGateway({ databaseUrl: proxy.rewrite(tdb.url), redis: testRedis });
});

afterAll(async () => {
  await proxy?.restore();
  await gateway?.close();
  await proxy?.close();
  await testRedis?.cleanup();
  await tdb?.drop();
});

const QUERY = "{ tenant { id } }";
const metricsText = async () => (await fetch(gateway.url.replace("/graphql", "/metrics"))).text();
const refused = async (code: string) => sampleValue(await metricsText(), "tasklane_api_requests_total", { operation: "none", code }) ?? 0;

/** The fast path (plain JSON POST) or Express's (GET); answers the HTTP status and the first error code. */
async function call(path: "post" | "get", apiKey: string): Promise<{ status: number; code: string | undefined }> {
  const auth = { authorization: `Bearer ${apiKey}` };
  const res =
    path === "post"
      ? await fetch(gateway.url, { method: "POST", headers: { "content-type": "application/json", ...auth }, body: JSON.stringify({ query: QUERY }) })
      : await fetch(`${gateway.url}?query=${encodeURIComponent(QUERY)}`, { headers: { ...auth, "apollo-require-preflight": "1" } });
  const body = (await res.json()) as { errors?: Array<{ extensions?: { code?: string } }> };
  return { status: res.status, code: body.errors?.[0]?.extensions?.code };
}

describe("requests refused before execution", () => {
  it("count as operation=none with code RATE_LIMITED", async () => {
    const { apiKey } = await createTenant(gateway, "limited", { apiRatePerSecond: 0.01, apiBurst: 2 });
    expect((await call("post", apiKey)).status).toBe(200);
    expect((await call("get", apiKey)).status).toBe(200);
    expect(await call("post", apiKey)).toEqual({ status: 429, code: "RATE_LIMITED" });
    expect(await call("get", apiKey)).toEqual({ status: 429, code: "RATE_LIMITED" });
    expect(await refused("RATE_LIMITED")).toBe(2);
  });

  it("count as operation=none with code OVERLOADED while Postgres is unreachable", async () => {
    const { apiKey } = await createTenant(gateway, "outage");
    expect((await call("post", apiKey)).status).toBe(200);
    await proxy.cut();
    try {
      // Until its 2 s cache entry expires the key is still known and the request runs (operation="tenant");
      // then authentication itself needs Postgres and the request is refused before execution.
      await waitFor(async () => (await call("post", apiKey)).code === "OVERLOADED" && (await refused("OVERLOADED")) > 0, 15_000, 200);
      const before = await refused("OVERLOADED");
      expect(await call("post", apiKey)).toEqual({ status: 503, code: "OVERLOADED" });
      expect(await call("get", apiKey)).toEqual({ status: 503, code: "OVERLOADED" });
      expect(await refused("OVERLOADED")).toBe(before + 2);
    } finally {
      await proxy.restore();
    }
  }, 30_000);
});
