/**
 * The SDK's webhooks.rotateSecret and a delivery's nextAttemptAt against the
 * real gateway (in process, real Postgres and Redis). rotateSecret is never
 * sent again after a lost answer: a repeat would rotate twice, so the secret
 * receivers still verify with would stop signing at once and the one the lost
 * answer carried would never be seen.
 */
import { IdPrefix, newId } from "@tasklane/core";
import { TasklaneClient } from "@tasklane/sdk";
import { describe, expect, it } from "vitest";
import { useGateway } from "../helpers/gateway-fixture.js";
import { createTenant } from "../helpers/platform.js";
import { losingAnswers, sdkRejection as rejection } from "../helpers/sdk-calls.js";

// A literal public address: no DNS, and nothing is delivered here (no notifier).
const URL_ = "https://93.184.216.34/hooks";

describe("SDK: webhook secret rotation and delivery schedule", () => {
  const platform = useGateway();
  const pool = () => platform.database.db.pool;

  const secretsOf = async (id: string) =>
    (await pool().query<{ secret: string; previous_secret: string | null }>("SELECT secret, previous_secret FROM webhooks WHERE id = $1", [id])).rows[0];

  it("rotateSecret answers the new secret once, the replaced one signing for 24 h; unknown ids are NOT_FOUND", async () => {
    const { apiKey } = await createTenant(platform.gateway);
    const client = new TasklaneClient({ url: platform.gateway.url, apiKey });
    const created = await client.webhooks.create({ url: URL_, events: ["*"] });
    expect(created.webhook.previousSecretExpiresAt).toBeNull();

    const rotated = await client.webhooks.rotateSecret(created.webhook.id);
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(created.secret);
    expect(rotated.webhook).toMatchObject({ id: created.webhook.id, url: URL_, enabled: true });
    const until = Date.parse(rotated.webhook.previousSecretExpiresAt ?? "");
    expect(until - Date.now()).toBeGreaterThan(23.9 * 3600_000);
    expect(until - Date.now()).toBeLessThanOrEqual(24 * 3600_000);
    expect(await secretsOf(created.webhook.id)).toEqual({ secret: rotated.secret, previous_secret: created.secret });
    expect(await client.webhooks.list()).toEqual([rotated.webhook]);

    expect((await rejection(client.webhooks.rotateSecret("whk_0190a0a0a0a07000800000000000000a"))).code).toBe("NOT_FOUND");
    await client.webhooks.delete(created.webhook.id);
    expect((await rejection(client.webhooks.rotateSecret(created.webhook.id))).code).toBe("NOT_FOUND");
  });

  it("is not sent again after a lost answer: one rotation, the original secret still signing", async () => {
    const { apiKey } = await createTenant(platform.gateway);
    const plain = new TasklaneClient({ url: platform.gateway.url, apiKey });
    const created = await plain.webhooks.create({ url: URL_, events: ["*"] });
    // The gateway answers; the answer is lost on the way back (a reset after the commit).
    const losing = losingAnswers(/^\s*mutation RotateWebhookSecret\b/);
    const client = new TasklaneClient({ url: platform.gateway.url, apiKey, fetch: losing.fetch });
    await rejection(client.webhooks.rotateSecret(created.webhook.id));
    expect(losing.sent()).toBe(1);
    // Rotated once: the secret receivers hold is the one still signing beside the new one.
    expect((await secretsOf(created.webhook.id))?.previous_secret).toBe(created.secret);
  });

  it("deliveries answer nextAttemptAt while PENDING, null once DELIVERED or FAILED", async () => {
    const { apiKey, tenantId } = await createTenant(platform.gateway);
    const client = new TasklaneClient({ url: platform.gateway.url, apiKey });
    const { webhook } = await client.webhooks.create({ url: URL_, events: ["*"] });
    // Rows as the notifier leaves them: one waiting 90 s for its retry, one delivered, one failed.
    const [pending, delivered, failed] = [newId(IdPrefix.delivery), newId(IdPrefix.delivery), newId(IdPrefix.delivery)];
    await pool().query(
      `INSERT INTO webhook_deliveries (id, tenant_id, webhook_id, url, event, body, status, attempts, last_response_code, next_attempt_at, created_at, delivered_at)
       VALUES ($1, $4, $5, $6, 'task.dead', '{}', 'PENDING', 1, 500, now() + interval '90 seconds', now() - interval '3 seconds', NULL),
              ($2, $4, $5, $6, 'task.dead', '{}', 'DELIVERED', 1, 204, now() - interval '1 second', now() - interval '2 seconds', now()),
              ($3, $4, $5, $6, 'task.dead', '{}', 'FAILED', 2, 500, now() - interval '1 second', now() - interval '1 second', NULL)`,
      [pending, delivered, failed, tenantId, webhook.id, URL_],
    );
    const deliveries = await client.webhooks.deliveries({ webhookId: webhook.id });
    const byId = new Map(deliveries.map((d) => [d.id, d]));
    const next = byId.get(pending)?.nextAttemptAt ?? "";
    expect(new Date(next).toISOString()).toBe(next);
    expect(Date.parse(next) - Date.now()).toBeGreaterThan(80_000);
    expect(Date.parse(next) - Date.now()).toBeLessThanOrEqual(90_000);
    expect(byId.get(delivered)).toMatchObject({ status: "DELIVERED", nextAttemptAt: null });
    expect(byId.get(failed)).toMatchObject({ status: "FAILED", nextAttemptAt: null });
  });
});
