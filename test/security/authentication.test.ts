/**
 * Authentication attacks on the gateway process: every wrong credential gets
 * one byte-identical answer over HTTP and over WebSocket, keys live in the
 * database only as hashes, and the admin token and tenant keys never stand in
 * for each other. (Scopes: test/integration/gateway-scopes.test.ts; revocation
 * across instances: gateway-auth.test.ts.)
 */
import { describe, expect, it } from "vitest";
import { httpToWs, openSubscription } from "../helpers/graphql-ws-client.js";
import { CASES, OWN_ONLY, missingRefs } from "../helpers/isolation-cases.js";
import { codeOf } from "../helpers/platform.js";
import { useAttackPlatform } from "./attack-platform.js";

const OPERATOR_ONLY = new Set(["createTenant", "updateTenant", "createConsoleUser"]);
/** Checks the email and password it is given, whatever token comes with it (UNAUTHENTICATED when they are wrong). */
const CREDENTIAL_CHECKS = new Set(["consoleSignIn"]);

/** Headers that legitimately differ between two identical answers. */
const PER_REQUEST_HEADERS = new Set(["date", "x-request-id"]);

function comparable(res: { status: number; headers: Headers; text: string }): string {
  const headers = [...res.headers.entries()].filter(([name]) => !PER_REQUEST_HEADERS.has(name)).sort();
  return JSON.stringify({ status: res.status, headers, body: res.text });
}

describe("security: authentication", () => {
  const platform = useAttackPlatform();

  async function freshKey(name: string, scopes?: string[]): Promise<{ id: string; secret: string }> {
    const res = await platform.call<{ createApiKey: { apiKey: { id: string }; secret: string } }>(
      `mutation ($n: String!, $s: [String!]) { createApiKey(name: $n, scopes: $s) { apiKey { id } secret } }`,
      { n: name, s: scopes ?? null },
      platform.canaries.apiKey,
    );
    const created = res.data?.createApiKey;
    if (!created) throw new Error(JSON.stringify(res.errors));
    return { id: created.apiKey.id, secret: created.secret };
  }

  it("answers missing, malformed, unknown, revoked and wrong-secret keys with one byte-identical UNAUTHENTICATED response", async () => {
    const canary = platform.canaries.apiKey;
    const [, prefix, secret = ""] = canary.split("_");
    const revoked = await freshKey("revoked");
    expect(codeOf(await platform.call(`mutation ($id: ID!) { revokeApiKey(id: $id) { id } }`, { id: revoked.id }, canary))).toBeUndefined();
    const flipped = `${secret.slice(0, -1)}${secret.endsWith("A") ? "B" : "A"}`;
    const credentials: Record<string, string | undefined> = {
      missing: undefined,
      empty: "",
      malformed: "not-a-key",
      "unknown prefix": `tl_zzzzzzzz_${secret}`,
      "wrong secret": `tl_${prefix}_${flipped}`,
      "truncated secret": `tl_${prefix}_${secret.slice(0, 10)}`,
      "key with a suffix": `${canary}x`,
      revoked: revoked.secret,
      "admin token with a suffix": `${platform.adminToken}x`,
      "oversized token": "x".repeat(600),
    };
    const answers = new Map<string, string>();
    for (const [label, token] of Object.entries(credentials)) {
      const res = await platform.post({ query: "{ tenant { id } }" }, token);
      expect({ label, code: res.json?.errors?.[0]?.extensions?.code }).toEqual({ label, code: "UNAUTHENTICATED" });
      answers.set(label, comparable(res));
    }
    // Other schemes and a bare "Bearer" too.
    for (const authorization of ["Basic dXNlcjpwYXNz", "Bearer", `Token ${canary}`]) {
      const res = await fetch(platform.url, { method: "POST", headers: { "content-type": "application/json", authorization }, body: JSON.stringify({ query: "{ tenant { id } }" }) });
      answers.set(authorization.split(" ")[0] ?? authorization, comparable({ status: res.status, headers: res.headers, text: await res.text() }));
    }
    expect(new Set(answers.values()).size).toBe(1);
    expect([...answers.values()][0]).not.toContain(prefix);
  });

  it("closes a WebSocket with one and the same 4401 for every wrong credential", async () => {
    const [, prefix, secret = ""] = platform.canaries.apiKey.split("_");
    const closes = new Set<string>();
    for (const authorization of [undefined, "garbage", `Bearer tl_${prefix}_${secret.slice(1)}A`, `Bearer tl_zzzzzzzz_${secret}`]) {
      const sub = openSubscription(httpToWs(platform.url), authorization, `subscription { taskUpdated { taskId } }`);
      try {
        const deadline = Date.now() + 10_000;
        while (sub.closeEvent === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
        closes.add(JSON.stringify(sub.closeEvent));
        expect(sub.values).toEqual([]);
      } finally {
        await sub.close();
      }
    }
    expect([...closes]).toEqual([JSON.stringify({ code: 4401, reason: "Unauthorized" })]);
  });

  it("stores API keys only as hashes: no table holds a key or its secret part", async () => {
    const extra = await freshKey("scan-me", ["read"]);
    const secrets = [platform.canaries.apiKey, extra.secret, platform.adminToken].flatMap((s) => [s, s.split("_").slice(2).join("_")]).filter((s) => s.length >= 16);
    const pool = platform.database.db.pool;
    const columns = await pool.query<{ table_name: string; column_name: string }>(
      `SELECT c.table_name, c.column_name FROM information_schema.columns c JOIN information_schema.tables t USING (table_schema, table_name)
        WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'
          AND c.data_type IN ('text', 'character varying', 'character', 'json', 'jsonb', 'ARRAY', 'bytea')`,
    );
    expect(columns.rows.map((c) => `${c.table_name}.${c.column_name}`)).toContain("api_keys.secret_hash");
    const found: string[] = [];
    for (const { table_name: table, column_name: column } of columns.rows) {
      const hits = await pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM "${table}" WHERE EXISTS (SELECT 1 FROM unnest($1::text[]) AS s WHERE strpos("${column}"::text, s) > 0)`,
        [secrets],
      );
      if ((hits.rows[0]?.n ?? 0) > 0) found.push(`${table}.${column}`);
    }
    expect(found).toEqual([]);
    // The stored value is a digest, not the key in another encoding.
    const stored = await pool.query<{ secret_hash: string }>(`SELECT secret_hash FROM api_keys WHERE id = $1`, [extra.id]);
    expect(stored.rows[0]?.secret_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it("refuses the admin token on every tenant operation with FORBIDDEN, and changes nothing", async () => {
    const before = await platform.snapshot();
    const refs = missingRefs();
    const operations = [...CASES.map((c) => ({ op: c.op, query: c.query, vars: c.vars(refs) })), ...OWN_ONLY.map((c) => ({ op: c.op, query: c.query, vars: {} }))].filter(
      (c) => !OPERATOR_ONLY.has(c.op) && !CREDENTIAL_CHECKS.has(c.op),
    );
    expect(operations.length).toBeGreaterThan(30);
    for (const { op, query, vars } of operations) {
      const res = await platform.call(query, vars, platform.adminToken);
      // Nullable fields answer null beside the error; nothing else comes back.
      const returned = Object.values(res.data ?? {}).filter((v) => v !== null);
      expect({ op, code: codeOf(res), returned }).toEqual({ op, code: "FORBIDDEN", returned: [] });
    }
    const sub = openSubscription(httpToWs(platform.url), `Bearer ${platform.adminToken}`, `subscription { taskUpdated { taskId } }`);
    try {
      const deadline = Date.now() + 10_000;
      while (sub.errors.length === 0 && sub.closeEvent === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(sub.errors[0]?.extensions?.code).toBe("FORBIDDEN");
    } finally {
      await sub.close();
    }
    expect(await platform.snapshot()).toEqual(before);
  });

  it("refuses tenant keys, of every scope, on operator operations with FORBIDDEN", async () => {
    const before = await platform.snapshot();
    const keys = [platform.canaries.apiKey, (await freshKey("read-only", ["read"])).secret];
    const afterKeys = await platform.snapshot();
    for (const key of keys) {
      const create = await platform.call(`mutation { createTenant(input: { name: "escalated" }) { tenant { id } apiKey } }`, {}, key);
      expect(codeOf(create)).toBe("FORBIDDEN");
      const update = await platform.call(`mutation ($id: ID!) { updateTenant(id: $id, limits: { apiBurst: 1000000, weight: 100 }) { id } }`, { id: platform.tenantId }, key);
      expect(codeOf(update)).toBe("FORBIDDEN");
    }
    expect(Object.keys(before)).toEqual(Object.keys(afterKeys));
    expect(await platform.snapshot()).toEqual(afterKeys);
  });

  it("leaks none of the planted secrets into logs, metrics or error messages", async () => {
    expect(await platform.leaks()).toEqual([]);
  });
});
