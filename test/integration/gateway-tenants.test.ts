/** Operator calls (createTenant, updateTenant), the tenant query and the signing secret. */
import { describe, expect, it } from "vitest";
import { useGateway } from "../helpers/gateway-fixture.js";
import { codeOf, createTenant, gql } from "../helpers/platform.js";

const CREATE = `mutation ($input: CreateTenantInput!) {
  createTenant(input: $input) {
    tenant { id name limits { weight maxConcurrency apiRatePerSecond apiBurst maxPendingTasks dailyTaskQuota } usage { pendingTasks runningTasks submittedToday } }
    apiKey signingSecret
  }
}`;
const UPDATE = `mutation ($id: ID!, $limits: TenantLimitsInput!) {
  updateTenant(id: $id, limits: $limits) { id limits { weight maxConcurrency apiRatePerSecond apiBurst maxPendingTasks dailyTaskQuota } }
}`;
const TENANT = `{ tenant { id name limits { weight apiRatePerSecond apiBurst maxPendingTasks } usage { pendingTasks runningTasks submittedToday } } }`;

describe("gateway tenants", () => {
  const platform = useGateway();

  it("createTenant with the admin token returns the tenant, a full key and a signing secret", async () => {
    const res = await gql<{ createTenant: { tenant: { id: string; name: string; limits: Record<string, unknown>; usage: Record<string, number> }; apiKey: string; signingSecret: string } }>(
      platform.gateway.url,
      CREATE,
      { input: { name: "Acme", limits: { maxPendingTasks: 1000 } } },
      platform.gateway.adminToken,
    );
    expect(res.errors).toBeUndefined();
    const created = res.data?.createTenant;
    expect(created?.tenant.id).toMatch(/^ten_[0-9a-f]{32}$/);
    expect(created?.tenant.name).toBe("Acme");
    expect(created?.tenant.limits).toEqual({ weight: 1, maxConcurrency: null, apiRatePerSecond: 200, apiBurst: 400, maxPendingTasks: 1000, dailyTaskQuota: null });
    expect(created?.tenant.usage).toEqual({ pendingTasks: 0, runningTasks: 0, submittedToday: 0 });
    expect(created?.apiKey).toMatch(/^tl_[a-z0-9]{8}_[A-Za-z0-9_-]{43}$/);
    expect(created?.signingSecret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);

    // Everything else came with it, in the same transaction: the "default" PULL queue and a full key.
    const rows = await platform.database.db.pool.query(
      `SELECT (SELECT count(*)::int FROM queues WHERE tenant_id = $1 AND name = 'default' AND mode = 'PULL') AS queues,
              (SELECT scopes FROM api_keys WHERE tenant_id = $1) AS scopes,
              (SELECT secret_hash FROM api_keys WHERE tenant_id = $1) AS hash`,
      [created?.tenant.id],
    );
    expect(rows.rows[0]).toMatchObject({ queues: 1, scopes: ["full"] });
    // The secret is base64url, so it may hold "_" itself: take everything after the prefix.
    const secret = /^tl_[a-z0-9]{8}_(.+)$/.exec(created?.apiKey ?? "")?.[1];
    expect(secret).toHaveLength(43);
    expect(rows.rows[0].hash).not.toContain(secret);

    const queues = await gql<{ queues: Array<{ name: string; mode: string }> }>(platform.gateway.url, `{ queues { name mode } }`, {}, created?.apiKey);
    expect(queues.data?.queues).toEqual([{ name: "default", mode: "PULL" }]);
  });

  it("refuses createTenant without a credential (UNAUTHENTICATED) and with a tenant key (FORBIDDEN)", async () => {
    const anonymous = await gql(platform.gateway.url, CREATE, { input: { name: "x" } });
    expect(codeOf(anonymous)).toBe("UNAUTHENTICATED");
    const wrong = await gql(platform.gateway.url, CREATE, { input: { name: "x" } }, "not-the-admin-token-at-all");
    expect(codeOf(wrong)).toBe("UNAUTHENTICATED");
    const { apiKey } = await createTenant(platform.gateway);
    const asTenant = await gql(platform.gateway.url, CREATE, { input: { name: "x" } }, apiKey);
    expect(codeOf(asTenant)).toBe("FORBIDDEN");
    const count = await platform.database.db.pool.query(`SELECT count(*)::int AS n FROM tenants WHERE name = 'x'`);
    expect(count.rows[0].n).toBe(0);
  });

  it("refuses the admin token on tenant operations with FORBIDDEN", async () => {
    const res = await gql(platform.gateway.url, TENANT, {}, platform.gateway.adminToken);
    expect(codeOf(res)).toBe("FORBIDDEN");
  });

  it("validates createTenant input", async () => {
    const res = await gql(platform.gateway.url, CREATE, { input: { name: "  ", limits: { weight: 0 } } }, platform.gateway.adminToken);
    expect(codeOf(res)).toBe("BAD_USER_INPUT");
    expect(res.errors?.[0]?.extensions?.fieldErrors).toEqual(
      expect.arrayContaining([expect.objectContaining({ path: "name" }), expect.objectContaining({ path: "limits.weight" })]),
    );
  });

  it("updateTenant changes only the given limits; an unknown id is NOT_FOUND", async () => {
    const { tenantId } = await createTenant(platform.gateway, "limits", { dailyTaskQuota: 50 });
    const res = await gql<{ updateTenant: { id: string; limits: Record<string, unknown> } }>(
      platform.gateway.url,
      UPDATE,
      { id: tenantId, limits: { weight: 5, apiRatePerSecond: 12.5, maxConcurrency: null } },
      platform.gateway.adminToken,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data?.updateTenant.limits).toEqual({ weight: 5, maxConcurrency: null, apiRatePerSecond: 12.5, apiBurst: 400, maxPendingTasks: null, dailyTaskQuota: 50 });

    const unknown = await gql(platform.gateway.url, UPDATE, { id: "ten_0190f0f0f0f07000800000000000000a", limits: { weight: 2 } }, platform.gateway.adminToken);
    expect(codeOf(unknown)).toBe("NOT_FOUND");
  });

  it("updateTenant's removeLimits takes limits away, leaving the others; naming one that is also set changes nothing", async () => {
    const { tenantId } = await createTenant(platform.gateway, "removable", { maxConcurrency: 0, maxPendingTasks: 10, dailyTaskQuota: 50 });
    const update = (limits: Record<string, unknown>) =>
      gql<{ updateTenant: { limits: Record<string, unknown> } }>(platform.gateway.url, UPDATE, { id: tenantId, limits }, platform.gateway.adminToken);
    const refused = await update({ dailyTaskQuota: 60, removeLimits: ["DAILY_TASK_QUOTA"] });
    expect(codeOf(refused)).toBe("BAD_USER_INPUT");
    const res = await update({ removeLimits: ["MAX_CONCURRENCY", "DAILY_TASK_QUOTA"], weight: 3 });
    expect(res.errors).toBeUndefined();
    expect(res.data?.updateTenant.limits).toEqual({ weight: 3, maxConcurrency: null, apiRatePerSecond: 200, apiBurst: 400, maxPendingTasks: 10, dailyTaskQuota: null });
  });

  it("tenant answers the caller's own tenant with usage counted from tasks and today's usage row", async () => {
    const { tenantId, apiKey } = await createTenant(platform.gateway, "usage");
    await platform.database.db.pool.query(
      `INSERT INTO tenant_daily_usage (tenant_id, day, submitted) VALUES ($1, (now() AT TIME ZONE 'UTC')::date, 7),
              ($1, (now() AT TIME ZONE 'UTC')::date - 1, 99)`,
      [tenantId],
    );
    const res = await gql<{ tenant: { id: string; name: string; usage: Record<string, number> } }>(platform.gateway.url, TENANT, {}, apiKey);
    expect(res.errors).toBeUndefined();
    expect(res.data?.tenant).toMatchObject({ id: tenantId, name: "usage", usage: { pendingTasks: 0, runningTasks: 0, submittedToday: 7 } });
  });

  it("rotateSigningSecret returns a new secret and keeps the old one for 24 h", async () => {
    const { tenantId, apiKey, signingSecret } = await createTenant(platform.gateway);
    const res = await gql<{ rotateSigningSecret: string }>(platform.gateway.url, `mutation { rotateSigningSecret }`, {}, apiKey);
    expect(res.errors).toBeUndefined();
    const next = res.data?.rotateSigningSecret;
    expect(next).toMatch(/^whsec_/);
    expect(next).not.toBe(signingSecret);
    const row = await platform.database.db.pool.query(
      `SELECT signing_secret, previous_signing_secret,
              extract(epoch FROM previous_secret_expires_at - now())::float8 AS grace FROM tenants WHERE id = $1`,
      [tenantId],
    );
    expect(row.rows[0]).toMatchObject({ signing_secret: next, previous_signing_secret: signingSecret });
    expect(row.rows[0].grace).toBeGreaterThan(86_000);
    expect(row.rows[0].grace).toBeLessThanOrEqual(86_400);

    // Rotating again within the 24 h keeps the secret it replaces, and ends the first at once (withdrawing a leaked one).
    const third = (await gql<{ rotateSigningSecret: string }>(platform.gateway.url, `mutation { rotateSigningSecret }`, {}, apiKey)).data?.rotateSigningSecret;
    const after = await platform.database.db.pool.query(`SELECT signing_secret, previous_signing_secret FROM tenants WHERE id = $1`, [tenantId]);
    expect(after.rows[0]).toEqual({ signing_secret: third, previous_signing_secret: next });
  });
});
