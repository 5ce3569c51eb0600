/**
 * Spent credentials: deleting a webhook drops its secret at once (the row
 * stays while its delivery log does); retention (pruneCredentials, run by
 * the scheduler's retention loop) deletes API keys revoked more than
 * TASK_RETENTION_DAYS ago, expired (console session) keys a week after
 * expiry, and webhooks deleted that long ago once no delivery names them, in
 * bounded batches, and nothing else.
 */
import { newId } from "@tasklane/core";
import { pruneCredentials } from "@tasklane/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApp, waitFor, type AppProcess } from "../helpers/app-process.js";
import { useGateway } from "../helpers/gateway-fixture.js";
import { codeOf, createTenant, gql, type CreatedTenant } from "../helpers/platform.js";

const OLD = "now() - interval '31 days'";
const RECENT = "now() - interval '1 day'";

describe("spent credentials", () => {
  const platform = useGateway({ env: { ALLOW_PRIVATE_TARGETS: "1" } });
  const db = () => platform.database.db;
  let t: CreatedTenant;
  let scheduler: AppProcess | undefined;

  const api = <T>(query: string, variables: Record<string, unknown> = {}) => gql<T>(platform.gateway.url, query, variables, t.apiKey);
  const existing = async (table: string, ids: string[]) =>
    new Set((await db().pool.query<{ id: string }>(`SELECT id FROM ${table} WHERE id = ANY($1::text[])`, [ids])).rows.map((r) => r.id));

  const key = async (revokedAt: string | null, expiresAt: string | null) => {
    const id = newId("key");
    await db().pool.query(
      `INSERT INTO api_keys (id, tenant_id, name, prefix, secret_hash, scopes, revoked_at, expires_at, created_at)
       VALUES ($1, $2, $1, 'tl_' || left(md5($1), 12), md5($1), '{full}', ${revokedAt ?? "NULL"}, ${expiresAt ?? "NULL"}, now() - interval '40 days')`,
      [id, t.tenantId],
    );
    return id;
  };
  const webhook = async (deletedAt: string | null) => {
    const id = newId("whk");
    await db().pool.query(
      `INSERT INTO webhooks (id, tenant_id, url, events, secret, enabled, deleted_at, created_at)
       VALUES ($1, $2, 'http://127.0.0.1:9/hook', '{*}', CASE WHEN $3 THEN '' ELSE 'whsec_x' END, $3 = false, ${deletedAt ?? "NULL"}, now() - interval '40 days')`,
      [id, t.tenantId, deletedAt !== null],
    );
    return id;
  };
  const delivery = (webhookId: string) =>
    db().pool.query(
      `INSERT INTO webhook_deliveries (id, tenant_id, webhook_id, url, event, body, status, next_attempt_at, created_at)
       VALUES ($1, $2, $3, 'http://127.0.0.1:9/hook', 'task.succeeded', '{}', 'DELIVERED', now(), now())`,
      [newId("dlv"), t.tenantId, webhookId],
    );

  beforeAll(async () => {
    t = await createTenant(platform.gateway, "credentials");
  });

  afterAll(async () => {
    await scheduler?.stop();
  });

  it("deleteWebhook drops the secret at once; the endpoint's delivery log stays readable", async () => {
    const created = await api<{ createWebhook: { webhook: { id: string }; secret: string } }>(
      `mutation { createWebhook(input: { url: "http://127.0.0.1:9/hook", events: ["*"] }) { webhook { id } secret } }`,
    );
    const id = created.data!.createWebhook.webhook.id;
    await delivery(id);
    const secretOf = async () => (await db().pool.query<{ secret: string }>("SELECT secret FROM webhooks WHERE id = $1", [id])).rows[0]?.secret;
    expect(await secretOf()).toBe(created.data!.createWebhook.secret);

    expect((await api(`mutation ($id: ID!) { deleteWebhook(id: $id) }`, { id })).data).toEqual({ deleteWebhook: true });
    expect(await secretOf()).toBe("");
    const log = await api<{ webhookDeliveries: { webhookId: string }[] }>(`query ($id: ID) { webhookDeliveries(webhookId: $id) { webhookId } }`, { id });
    expect(log.errors).toBeUndefined();
    expect(log.data?.webhookDeliveries).toEqual([{ webhookId: id }]);
    // Gone for every other purpose, as before.
    expect(codeOf(await api(`mutation ($id: ID!) { updateWebhook(id: $id, input: { enabled: true }) { id } }`, { id }))).toBe("NOT_FOUND");
  });

  it("prunes revoked and expired keys and deleted webhooks past retention, in bounded batches, and nothing else", async () => {
    const keys = {
      revokedLongAgo: await key(OLD, null),
      revokedLongAgo2: await key(OLD, null),
      revokedRecently: await key(RECENT, null),
      sessionExpiredLongAgo: await key(null, "now() - interval '8 days'"),
      sessionRevokedExpiredLongAgo: await key(RECENT, "now() - interval '8 days'"),
      sessionExpiredRecently: await key(null, "now() - interval '6 days'"),
      sessionLive: await key(null, "now() + interval '1 hour'"),
      live: await key(null, null),
    };
    const hooks = {
      deletedLongAgo: await webhook(OLD),
      deletedLongAgoWithLog: await webhook(OLD),
      deletedRecently: await webhook(RECENT),
      live: await webhook(null),
    };
    await delivery(hooks.deletedLongAgoWithLog);
    const allKeys = Object.values(keys);
    const allHooks = Object.values(hooks);

    // TASK_RETENTION_DAYS=0 keeps history: only session keys expired over a week ago go.
    const kept = await pruneCredentials(db(), 0);
    expect(kept).toEqual({ pruned: { apiKeys: 2, webhooks: 0 }, full: false });
    expect(await existing("api_keys", [keys.sessionExpiredLongAgo, keys.sessionRevokedExpiredLongAgo])).toEqual(new Set());

    const first = await pruneCredentials(db(), 30, 1);
    expect(first).toEqual({ pruned: { apiKeys: 1, webhooks: 1 }, full: true });
    const second = await pruneCredentials(db(), 30, 1);
    expect(second).toEqual({ pruned: { apiKeys: 1, webhooks: 0 }, full: true });
    const last = await pruneCredentials(db(), 30, 1);
    expect(last).toEqual({ pruned: { apiKeys: 0, webhooks: 0 }, full: false });

    expect(await existing("api_keys", allKeys)).toEqual(new Set([keys.revokedRecently, keys.sessionExpiredRecently, keys.sessionLive, keys.live]));
    expect(await existing("webhooks", allHooks)).toEqual(new Set([hooks.deletedLongAgoWithLog, hooks.deletedRecently, hooks.live]));
    // The tenant's own key, and the webhook deleted in the test above (its log remains), are untouched.
    expect((await api<{ apiKeys: { id: string }[] }>(`{ apiKeys { id } }`)).errors).toBeUndefined();
  });

  it("the scheduler's retention loop runs it", async () => {
    const revoked = await key(OLD, null);
    const expired = await key(null, "now() - interval '8 days'");
    const deleted = await webhook(OLD);
    const stays = await key(RECENT, null);
    scheduler = startApp("scheduler", {
      DATABASE_URL: platform.database.url,
      REDIS_URL: platform.redis.url,
      REDIS_KEY_PREFIX: platform.redis.prefix,
      TASK_RETENTION_DAYS: "30",
      RETENTION_PRUNE_INTERVAL_SECONDS: "1",
      LOG_LEVEL: "warn",
    });
    await waitFor(
      "the scheduler to prune",
      async () => (await existing("api_keys", [revoked, expired])).size === 0 && (await existing("webhooks", [deleted])).size === 0,
      30_000,
      200,
    );
    expect(await existing("api_keys", [stays])).toEqual(new Set([stays]));
  });
});
