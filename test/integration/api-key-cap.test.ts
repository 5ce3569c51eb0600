/**
 * MAX_API_KEYS_PER_TENANT: createApiKey past the tenant's live keys (not
 * revoked; console session keys, which expire, are outside the cap) is
 * QUOTA_EXCEEDED and writes nothing, exactly, however many creates race for
 * the last slots; a revoked key frees its slot; signing in to the console
 * still works at the cap, and a console user keeps at most
 * MAX_CONSOLE_SESSIONS_PER_USER session keys. Keys up to the cap are seeded
 * straight in SQL.
 */
import { MAX_API_KEYS_PER_TENANT, MAX_CONSOLE_SESSIONS_PER_USER, newId } from "@tasklane/core";
import { describe, expect, it } from "vitest";
import { useGateway } from "../helpers/gateway-fixture.js";
import { codeOf, createTenant, gql, type GqlResponse } from "../helpers/platform.js";

const CREATE_KEY = `mutation ($n: String!) { createApiKey(name: $n) { apiKey { id name } secret } }`;
const REVOKE_KEY = `mutation ($id: ID!) { revokeApiKey(id: $id) { id revokedAt } }`;
const CREATE_USER = `mutation ($t: ID!, $e: String!, $p: String!) { createConsoleUser(tenantId: $t, email: $e, password: $p) { id } }`;
const SIGN_IN = `mutation ($e: String!, $p: String!) { consoleSignIn(email: $e, password: $p) { token apiKeyId } }`;

const RACERS = 20;
const SLOTS_LEFT = 5;

describe("cap on a tenant's API keys", () => {
  const platform = useGateway();

  const rows = async (sql: string, tenantId: string) => (await platform.database.db.pool.query<{ n: number }>(sql, [tenantId])).rows[0]!.n;
  const liveKeys = (tenantId: string) => rows("SELECT count(*)::int AS n FROM api_keys WHERE tenant_id = $1 AND revoked_at IS NULL AND expires_at IS NULL", tenantId);
  const allKeys = (tenantId: string) => rows("SELECT count(*)::int AS n FROM api_keys WHERE tenant_id = $1", tenantId);
  /** `n` keys named `${name}-i`; `extra` sets revoked_at / expires_at. */
  const seed = (tenantId: string, name: string, n: number, extra = { revoked: false, expires: null as string | null }) =>
    platform.database.db.pool.query(
      `INSERT INTO api_keys (id, tenant_id, name, prefix, secret_hash, scopes, revoked_at, expires_at)
       SELECT k.id, $1, $2 || '-' || k.n, 'tl_' || left(md5($1 || $2 || k.n), 12), md5(random()::text), '{full}',
              CASE WHEN $4 THEN now() END, $5::timestamptz
         FROM unnest($3::text[]) WITH ORDINALITY AS k(id, n)`,
      [tenantId, name, Array.from({ length: n }, () => newId("key")), extra.revoked, extra.expires],
    );

  it("20 racing creates with 5 slots left create exactly 5; past the cap nothing is written; a revoked key frees its slot", async () => {
    const t = await createTenant(platform.gateway, "key-cap", { apiRatePerSecond: 1000, apiBurst: 1000 });
    // The tenant's first key (createTenant's) is one of them. Revoked keys and session keys,
    // live or expired, take no slot.
    await seed(t.tenantId, "seed", MAX_API_KEYS_PER_TENANT - SLOTS_LEFT - 1);
    await seed(t.tenantId, "revoked", 10, { revoked: true, expires: null });
    await seed(t.tenantId, "console session live", 10, { revoked: false, expires: new Date(Date.now() + 3_600_000).toISOString() });
    await seed(t.tenantId, "console session expired", 10, { revoked: false, expires: new Date(Date.now() - 3_600_000).toISOString() });

    const replies: GqlResponse<unknown>[] = await Promise.all(Array.from({ length: RACERS }, (_, i) => gql(platform.gateway.url, CREATE_KEY, { n: `race-${i}` }, t.apiKey)));
    expect(replies.filter((r) => r.errors === undefined)).toHaveLength(SLOTS_LEFT);
    expect(replies.filter((r) => r.errors !== undefined).map(codeOf)).toEqual(Array.from({ length: RACERS - SLOTS_LEFT }, () => "QUOTA_EXCEEDED"));
    expect(await liveKeys(t.tenantId)).toBe(MAX_API_KEYS_PER_TENANT);

    const total = await allKeys(t.tenantId);
    const over = await gql(platform.gateway.url, CREATE_KEY, { n: "one-more" }, t.apiKey);
    expect(over.errors?.[0]).toMatchObject({
      message: `A tenant may have at most ${MAX_API_KEYS_PER_TENANT} API keys`,
      extensions: { code: "QUOTA_EXCEEDED", quota: "apiKeysPerTenant", limit: MAX_API_KEYS_PER_TENANT },
    });
    expect(await allKeys(t.tenantId)).toBe(total);

    // apiKeys answers them all: 100 live, 10 revoked, 20 session keys.
    const listed = await gql<{ apiKeys: { id: string }[] }>(platform.gateway.url, `{ apiKeys { id } }`, {}, t.apiKey);
    expect(listed.data?.apiKeys).toHaveLength(total);

    const created = replies.find((r) => r.errors === undefined)!.data as { createApiKey: { apiKey: { id: string } } };
    expect((await gql(platform.gateway.url, REVOKE_KEY, { id: created.createApiKey.apiKey.id }, t.apiKey)).errors).toBeUndefined();
    expect((await gql(platform.gateway.url, CREATE_KEY, { n: "after-revoke" }, t.apiKey)).errors).toBeUndefined();
    expect(await liveKeys(t.tenantId)).toBe(MAX_API_KEYS_PER_TENANT);

    // Another tenant is not held to this one's count.
    const other = await createTenant(platform.gateway, "key-cap-other");
    expect((await gql(platform.gateway.url, CREATE_KEY, { n: "mine" }, other.apiKey)).errors).toBeUndefined();
  });

  it("a tenant at the cap can still sign in to the console, and the session key works", async () => {
    const t = await createTenant(platform.gateway, "key-cap-console");
    await seed(t.tenantId, "seed", MAX_API_KEYS_PER_TENANT - 1);
    expect(codeOf(await gql(platform.gateway.url, CREATE_KEY, { n: "one-more" }, t.apiKey))).toBe("QUOTA_EXCEEDED");

    const user = await gql(platform.gateway.url, CREATE_USER, { t: t.tenantId, e: "capped@example.com", p: "a perfectly fine password" }, platform.gateway.adminToken);
    expect(user.errors).toBeUndefined();
    const signedIn = await gql<{ consoleSignIn: { token: string; apiKeyId: string } }>(platform.gateway.url, SIGN_IN, { e: "capped@example.com", p: "a perfectly fine password" });
    expect(signedIn.errors).toBeUndefined();
    const session = signedIn.data!.consoleSignIn;
    // The console revokes a key to make room, then creates one.
    const listed = await gql<{ apiKeys: { id: string; name: string }[] }>(platform.gateway.url, `{ apiKeys { id name } }`, {}, session.token);
    const victim = listed.data!.apiKeys.find((k) => k.name === "seed-1")!;
    expect((await gql(platform.gateway.url, REVOKE_KEY, { id: victim.id }, session.token)).errors).toBeUndefined();
    expect((await gql(platform.gateway.url, CREATE_KEY, { n: "made-room" }, session.token)).errors).toBeUndefined();
    expect(await liveKeys(t.tenantId)).toBe(MAX_API_KEYS_PER_TENANT);
  });

  it("a console user keeps at most MAX_CONSOLE_SESSIONS_PER_USER session keys: signing in deletes the oldest beyond it", async () => {
    const t = await createTenant(platform.gateway, "console-sessions", { apiRatePerSecond: 1000, apiBurst: 1000 });
    const password = "a perfectly fine password";
    for (const e of ["busy@example.com", "calm@example.com"]) {
      expect((await gql(platform.gateway.url, CREATE_USER, { t: t.tenantId, e, p: password }, platform.gateway.adminToken)).errors).toBeUndefined();
    }
    const signIn = async (e: string) => (await gql<{ consoleSignIn: { token: string; apiKeyId: string } }>(platform.gateway.url, SIGN_IN, { e, p: password })).data!.consoleSignIn;
    const calm = await signIn("calm@example.com");
    // A tenant's own key that happens to carry a session's name is not a session key.
    expect((await gql(platform.gateway.url, CREATE_KEY, { n: "console session busy@example.com" }, t.apiKey)).errors).toBeUndefined();
    // One already expired counts too (it would otherwise stay a week).
    const expired = newId("key");
    await platform.database.db.pool.query(
      `INSERT INTO api_keys (id, tenant_id, name, prefix, secret_hash, scopes, expires_at, created_at)
       VALUES ($1, $2, 'console session busy@example.com', 'tl_' || left(md5($1), 12), md5($1), '{full}', now() - interval '1 hour', now() - interval '13 hours')`,
      [expired, t.tenantId],
    );

    const sessions = [];
    for (let i = 0; i < MAX_CONSOLE_SESSIONS_PER_USER + 2; i++) sessions.push(await signIn("busy@example.com"));
    const busyKeys = await platform.database.db.pool.query<{ id: string }>(
      "SELECT id FROM api_keys WHERE tenant_id = $1 AND name = 'console session busy@example.com' AND expires_at IS NOT NULL ORDER BY created_at",
      [t.tenantId],
    );
    expect(busyKeys.rows.map((r) => r.id)).toEqual(sessions.slice(-MAX_CONSOLE_SESSIONS_PER_USER).map((s) => s.apiKeyId));
    expect(busyKeys.rows.map((r) => r.id)).not.toContain(expired);
    expect(codeOf(await gql(platform.gateway.url, `{ tenant { id } }`, {}, sessions[0]!.token))).toBe("UNAUTHENTICATED");
    expect((await gql(platform.gateway.url, `{ tenant { id } }`, {}, sessions.at(-1)!.token)).errors).toBeUndefined();
    expect((await gql(platform.gateway.url, `{ tenant { id } }`, {}, calm.token)).errors).toBeUndefined();
    expect(await rows("SELECT count(*)::int AS n FROM api_keys WHERE tenant_id = $1 AND name = 'console session busy@example.com' AND expires_at IS NULL", t.tenantId)).toBe(1);
  });
});
