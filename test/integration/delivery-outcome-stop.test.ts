/**
 * recordDeliveryOutcome's stop of a disabled webhook's waiting deliveries
 * (410, the failure threshold) says why in the words the claim would abandon
 * them with (claim-deliveries.ts, blockedReason): a deleted webhook's as
 * "webhook was deleted", never with no lastError at all.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordDeliveryOutcome } from "@tasklane/db";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";
import { addWebhook, seedNotifierTenant } from "./notifier-harness.js";

let tdb: TestDatabase;

beforeAll(async () => {
  tdb = await createTestDatabase("outcomestop");
});
afterAll(async () => {
  await tdb?.drop();
});

describe("a webhook deleted while two of its deliveries were in flight", () => {
  it("fails the one left waiting for a retry as deleted when the other is answered 410", async () => {
    const t = await seedNotifierTenant(tdb.db);
    const hook = await addWebhook(tdb.db, t.tenantId, "https://gone.example/hook", ["*"]);
    const lockedUntil = new Date(Date.now() + 60_000);
    // One still in flight, and one whose attempt came back as a retry after the deletion (no claim, due later).
    await tdb.db.pool.query(
      `INSERT INTO webhook_deliveries (id, tenant_id, webhook_id, url, event, body, attempts, next_attempt_at, locked_until)
       VALUES ('dlv_stop_inflight', $1, $2, 'https://gone.example/hook', 'task.succeeded', '{}', 0, now(), $3),
              ('dlv_stop_waiting', $1, $2, 'https://gone.example/hook', 'task.succeeded', '{}', 1, now() + interval '1 hour', NULL)`,
      [t.tenantId, hook.id, lockedUntil],
    );
    // As WebhookService.delete leaves it: disabled, no reason of its own, deleted.
    await tdb.db.pool.query("UPDATE webhooks SET deleted_at = now(), enabled = false, secret = '' WHERE id = $1", [hook.id]);

    const held = await recordDeliveryOutcome(tdb.db, { id: "dlv_stop_inflight", attempts: 0, lockedUntil }, { kind: "gone", responseCode: 410 });
    expect(held).toBe(true);
    const rows = await tdb.db.pool.query("SELECT id, status, last_error FROM webhook_deliveries WHERE webhook_id = $1 ORDER BY id", [hook.id]);
    expect(rows.rows).toEqual([
      { id: "dlv_stop_inflight", status: "FAILED", last_error: "endpoint answered 410 Gone" },
      { id: "dlv_stop_waiting", status: "FAILED", last_error: "webhook was deleted" },
    ]);
  });
});
