/** API key authentication, scopes, key management and revocation. */
import { describe, expect, it } from "vitest";
import { useGateway } from "../helpers/gateway-fixture.js";
import { httpToWs, openSubscription } from "../helpers/graphql-ws-client.js";
import { codeOf, createTenant, gql, waitFor } from "../helpers/platform.js";

const CREATE_KEY = `mutation ($name: String!, $scopes: [String!]) {
  createApiKey(name: $name, scopes: $scopes) { apiKey { id name prefix scopes createdAt lastUsedAt revokedAt } secret }
}`;
const REVOKE_KEY = `mutation ($id: ID!) { revokeApiKey(id: $id) { id revokedAt } }`;

interface KeyWithSecret {
  apiKey: { id: string; name: string; prefix: string; scopes: string[]; createdAt: string; lastUsedAt: string | null; revokedAt: string | null };
  secret: string;
}

describe("gateway auth", () => {
  const platform = useGateway();

  it("answers every bad credential with the same UNAUTHENTICATED error", async () => {
    const { apiKey } = await createTenant(platform.gateway);
    const [, prefixPart, secretPart] = apiKey.split("_");
    const created = await gql<{ createApiKey: KeyWithSecret }>(platform.gateway.url, CREATE_KEY, { name: "doomed" }, apiKey);
    const doomed = created.data?.createApiKey;
    await gql(platform.gateway.url, REVOKE_KEY, { id: doomed?.apiKey.id }, apiKey);

    const flipped = `${secretPart?.slice(0, -1)}${secretPart?.endsWith("A") ? "B" : "A"}`;
    const credentials: Array<string | undefined> = [
      undefined, // missing
      "", // empty bearer
      "garbage", // malformed
      `tl_zzzzzzzz_${secretPart}`, // unknown prefix
      `tl_${prefixPart}_${flipped}`, // wrong secret
      doomed?.secret, // revoked
    ];
    const bodies = new Set<string>();
    for (const token of credentials) {
      const res = await gql(platform.gateway.url, `{ tenant { id } }`, {}, token);
      expect(res.status).toBe(200);
      expect(codeOf(res)).toBe("UNAUTHENTICATED");
      bodies.add(JSON.stringify({ data: res.data, errors: res.errors }));
    }
    expect(bodies.size).toBe(1);

    const raw = await fetch(platform.gateway.url, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Basic dXNlcjpwYXNz" },
      body: JSON.stringify({ query: "{ tenant { id } }" }),
    });
    const body = (await raw.json()) as { data: unknown; errors: unknown };
    expect(JSON.stringify({ data: body.data, errors: body.errors })).toBe([...bodies][0]);
  });

  it("creates, lists and revokes keys; a revoked key stops working within 3 s on another instance", async () => {
    const { apiKey } = await createTenant(platform.gateway);
    const other = await platform.startAnother();
    const created = await gql<{ createApiKey: KeyWithSecret }>(platform.gateway.url, CREATE_KEY, { name: "ci", scopes: ["submit", "read"] }, apiKey);
    expect(created.errors).toBeUndefined();
    const key = created.data?.createApiKey;
    expect(key?.apiKey).toMatchObject({ name: "ci", scopes: ["submit", "read"], revokedAt: null, lastUsedAt: null });
    expect(key?.secret.startsWith(`${key?.apiKey.prefix}_`)).toBe(true);

    // Warm the other instance's cache with the key, then revoke through the first instance.
    expect(codeOf(await gql(other.url, `{ tenant { id } }`, {}, key?.secret))).toBeUndefined();
    const revoked = await gql<{ revokeApiKey: { id: string; revokedAt: string | null } }>(platform.gateway.url, REVOKE_KEY, { id: key?.apiKey.id }, apiKey);
    expect(revoked.data?.revokeApiKey.revokedAt).not.toBeNull();

    expect(codeOf(await gql(platform.gateway.url, `{ tenant { id } }`, {}, key?.secret))).toBe("UNAUTHENTICATED");
    const elapsed = await waitFor(async () => codeOf(await gql(other.url, `{ tenant { id } }`, {}, key?.secret)) === "UNAUTHENTICATED", 3_000);
    expect(elapsed).toBeLessThan(3_000);

    const list = await gql<{ apiKeys: Array<{ id: string; name: string; revokedAt: string | null; lastUsedAt: string | null }> }>(
      platform.gateway.url,
      `{ apiKeys { id name revokedAt lastUsedAt } }`,
      {},
      apiKey,
    );
    expect(list.data?.apiKeys.map((k) => k.name)).toEqual(["default", "ci"]);
    expect(list.data?.apiKeys[1]?.revokedAt).not.toBeNull();
    // The key was used (at most one write a minute), so last_used_at is set.
    expect(list.data?.apiKeys[0]?.lastUsedAt).not.toBeNull();
  });

  it("closes the open subscriptions of a key revoked on another instance, or expired, with 4401; other keys' stay open", async () => {
    const { apiKey } = await createTenant(platform.gateway);
    const other = await platform.startAnother();
    const keys = await Promise.all(
      ["revoked", "expired"].map(async (name) => (await gql<{ createApiKey: KeyWithSecret }>(platform.gateway.url, CREATE_KEY, { name, scopes: ["read"] }, apiKey)).data?.createApiKey),
    );
    const [revoked, expired] = keys;
    if (!revoked || !expired) throw new Error("keys not created");
    const listen = (url: string, secret: string) => openSubscription(httpToWs(url), `Bearer ${secret}`, `subscription { taskUpdated { taskId } }`);
    const subs = { revoked: listen(other.url, revoked.secret), expired: listen(platform.gateway.url, expired.secret), kept: listen(other.url, apiKey) };
    try {
      await waitFor(async () => Object.values(subs).every((s) => s.connected), 10_000);

      // Revoked through the first instance while the socket is open on the other; a console session key runs out.
      expect(codeOf(await gql(platform.gateway.url, REVOKE_KEY, { id: revoked.apiKey.id }, apiKey))).toBeUndefined();
      await platform.database.db.pool.query(`UPDATE api_keys SET expires_at = now() WHERE id = $1`, [expired.apiKey.id]);

      await waitFor(async () => subs.revoked.closeEvent !== null && subs.expired.closeEvent !== null, 15_000);
      expect(subs.revoked.closeEvent).toEqual({ code: 4401, reason: "Unauthorized" });
      expect(subs.expired.closeEvent).toEqual({ code: 4401, reason: "Unauthorized" });
      // The sweep that closed the revoked key's socket looked at this one on the same instance, and kept it.
      expect(subs.kept.closeEvent).toBeNull();
      expect(Object.values(subs).flatMap((s) => s.errors)).toEqual([]);
    } finally {
      await Promise.all(Object.values(subs).map((s) => s.close()));
    }
  });

  it("takes the tenant from the key: another tenant's key id is NOT_FOUND", async () => {
    const a = await createTenant(platform.gateway);
    const b = await createTenant(platform.gateway);
    const bKeys = await gql<{ apiKeys: Array<{ id: string }> }>(platform.gateway.url, `{ apiKeys { id } }`, {}, b.apiKey);
    const bKeyId = bKeys.data?.apiKeys[0]?.id;
    const res = await gql(platform.gateway.url, REVOKE_KEY, { id: bKeyId }, a.apiKey);
    expect(codeOf(res)).toBe("NOT_FOUND");
    expect(codeOf(await gql(platform.gateway.url, `{ tenant { id } }`, {}, b.apiKey))).toBeUndefined();
    expect(codeOf(await gql(platform.gateway.url, REVOKE_KEY, { id: "nonsense" }, a.apiKey))).toBe("NOT_FOUND");
  });

  it("enforces scopes: a read key may query but gets FORBIDDEN on mutations", async () => {
    const { apiKey } = await createTenant(platform.gateway);
    const created = await gql<{ createApiKey: KeyWithSecret }>(platform.gateway.url, CREATE_KEY, { name: "ro", scopes: ["read"] }, apiKey);
    const readKey = created.data?.createApiKey.secret;
    expect(codeOf(await gql(platform.gateway.url, `{ tenant { id } queues { name } }`, {}, readKey))).toBeUndefined();
    for (const mutation of [
      `mutation { submitTask(input: { type: "x" }) { id } }`,
      `mutation { pauseQueue(name: "default") { name } }`,
      `mutation { createApiKey(name: "escalate", scopes: ["full"]) { secret } }`,
      `mutation { rotateSigningSecret }`,
    ]) {
      expect(codeOf(await gql(platform.gateway.url, mutation, {}, readKey))).toBe("FORBIDDEN");
    }
    const paused = await platform.database.db.pool.query(`SELECT count(*)::int AS n FROM queues WHERE paused`);
    expect(paused.rows[0].n).toBe(0);
  });

  it("validates scopes and defaults to full", async () => {
    const { apiKey } = await createTenant(platform.gateway);
    const bad = await gql(platform.gateway.url, CREATE_KEY, { name: "x", scopes: ["admin"] }, apiKey);
    expect(codeOf(bad)).toBe("BAD_USER_INPUT");
    const empty = await gql(platform.gateway.url, CREATE_KEY, { name: "x", scopes: [] }, apiKey);
    expect(codeOf(empty)).toBe("BAD_USER_INPUT");
    const dflt = await gql<{ createApiKey: KeyWithSecret }>(platform.gateway.url, CREATE_KEY, { name: "x" }, apiKey);
    expect(dflt.data?.createApiKey.apiKey.scopes).toEqual(["full"]);
  });
});
