/**
 * webhookDeliveries reads what it shows, not the deliveries' bodies: a body
 * carries the task (payload and result, up to 256 KiB each), so a page of 500
 * read whole was up to ~256 MB in the gateway. Postgres sits behind a TCP
 * proxy that counts the bytes it sends back.
 */
import { IdPrefix, newId } from "@tasklane/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTenant, createTestDatabase, createTestRedis, gql, startGateway, type StartedGateway, type TestDatabase, type TestRedis } from "../helpers/platform.js";
import { startTcpProxy, type TcpProxy } from "../helpers/tcp-proxy.js";

const DELIVERIES = 20;
const BODY = JSON.stringify({ type: "task.succeeded", data: { task: { payload: { blob: "x".repeat(200 * 1024) } } } });

let tdb: TestDatabase;
let testRedis: TestRedis;
let proxy: TcpProxy;
let gateway: StartedGateway;

beforeAll(async () => {
  tdb = await createTestDatabase("dlvread");
  testRedis = createTestRedis();
  proxy = await startTcpProxy("127.0.0.1", Number(new URL(tdb.url).port || 5432));
  gateway = await startGateway({ databaseUrl: proxy.rewrite(tdb.url), redis: testRedis });
});

afterAll(async () => {
  await gateway?.close();
  await proxy?.close();
  await testRedis?.cleanup();
  await tdb?.drop();
});

describe("webhookDeliveries", () => {
  it("lists deliveries without reading their bodies from Postgres", async () => {
    const { tenantId, apiKey } = await createTenant(gateway);
    for (let i = 0; i < DELIVERIES; i++) {
      await tdb.db.pool.query(
        `INSERT INTO webhook_deliveries (id, tenant_id, url, event, body, status, attempts, last_response_code, delivered_at)
         VALUES ($1, $2, 'http://127.0.0.1:9/callback', 'task.succeeded', $3, 'DELIVERED', 1, 200, now())`,
        [newId(IdPrefix.delivery), tenantId, BODY],
      );
    }
    // Warm: the key's lookup and the statements' first plans are not what is measured.
    await gql(gateway.url, `{ webhookDeliveries(first: 1) { id } }`, {}, apiKey);

    const before = proxy.bytesFromTarget;
    const res = await gql<{ webhookDeliveries: Array<{ id: string; status: string; lastResponseCode: number }> }>(
      gateway.url,
      `{ webhookDeliveries(first: 50) { id status lastResponseCode createdAt deliveredAt } }`,
      {},
      apiKey,
    );
    const read = proxy.bytesFromTarget - before;
    expect(res.errors).toBeUndefined();
    expect(res.data?.webhookDeliveries).toHaveLength(DELIVERIES);
    expect(res.data?.webhookDeliveries.every((d) => d.status === "DELIVERED" && d.lastResponseCode === 200)).toBe(true);
    // Reading the bodies would be DELIVERIES × ~200 KiB (4 MB); the rows without them are a few KB.
    expect(read).toBeLessThan(100 * 1024);
  });
});
