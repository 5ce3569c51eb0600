/**
 * webhookDeliveries reads what it shows, not the deliveries' bodies: a body
 * carries the task (payload and result, up to 256 KiB each), so a page of 500
 * read whole was up to ~256 MB in the gateway. Postgres sits behind a TCP
 * proxy that counts the bytes it sends back.
 */
import { IdPrefix, newId } from "@tasklane/core";
import { describe, expect, it } from "vitest";
import { useGatewayBehindPostgresProxy } from "../helpers/gateway-fixture.js";
import { createTenant, gql } from "../helpers/platform.js";

const DELIVERIES = 20;
const BODY = JSON.stringify({ type: "task.succeeded", data: { task: { payload: { blob: "x".repeat(200 * 1024) } } } });

describe("webhookDeliveries", () => {
  const platform = useGatewayBehindPostgresProxy("dlvread");

  it("lists deliveries without reading their bodies from Postgres", async () => {
    const { gateway, proxy, database: tdb } = platform;
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
