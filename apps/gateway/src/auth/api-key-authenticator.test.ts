import { hashSecret, newApiKeySecret } from "@tasklane/core";
import type { Database } from "@tasklane/db";
import { describe, expect, it } from "vitest";
import { createLogger } from "../observability/logger.js";
import { ApiKeyAuthenticator } from "./api-key-authenticator.js";

/** A stand-in for the database: one key row, counting lookups and last_used_at writes. */
function fakeDatabase(secret: string) {
  const state = { revokedAt: null as Date | null, lookups: 0, writes: [] as string[] };
  const row = () => ({ id: "key_1", tenant_id: "ten_1", secret_hash: hashSecret(secret), scopes: ["submit"], revoked_at: state.revokedAt, expires_at: null });
  const db = {
    pool: {
      query: async (statement: string | { text: string }) => {
        const sql = typeof statement === "string" ? statement : statement.text;
        if (sql.startsWith("SELECT")) {
          state.lookups += 1;
          return { rowCount: 1, rows: [row()] };
        }
        state.writes.push(sql);
        return { rowCount: 1, rows: [] };
      },
    },
    close: async () => undefined,
  };
  return { state, db: db as unknown as Database };
}

describe("ApiKeyAuthenticator", () => {
  const { secret } = newApiKeySecret();
  const log = createLogger("silent");

  it("stops accepting a key revoked elsewhere within the 2 s cache", async () => {
    let now = 1_000_000;
    const { state, db } = fakeDatabase(secret);
    const auth = new ApiKeyAuthenticator(db, log, () => now);
    expect(await auth.authenticate(secret)).toMatchObject({ tenantId: "ten_1", apiKeyId: "key_1", scopes: ["submit"] });
    state.revokedAt = new Date();
    now += 1_999;
    expect(await auth.authenticate(secret)).not.toBeNull();
    now += 2;
    expect(await auth.authenticate(secret)).toBeNull();
    expect(state.lookups).toBe(2);
  });

  it("forgets a key at once on the instance that revoked it", async () => {
    const { state, db } = fakeDatabase(secret);
    const auth = new ApiKeyAuthenticator(db, log, () => 5_000);
    expect(await auth.authenticate(secret)).not.toBeNull();
    state.revokedAt = new Date();
    auth.forget(secret.split("_").slice(0, 2).join("_"));
    expect(await auth.authenticate(secret)).toBeNull();
  });

  it("records last use at most once a minute per key, guarded in SQL for other instances", async () => {
    let now = 10_000_000;
    const { state, db } = fakeDatabase(secret);
    const auth = new ApiKeyAuthenticator(db, log, () => now);
    for (let i = 0; i < 50; i++) {
      await auth.authenticate(secret);
      now += 1_000;
    }
    expect(state.writes).toHaveLength(1);
    now += 10_000;
    await auth.authenticate(secret);
    expect(state.writes).toHaveLength(2);
    expect(state.writes[0]).toMatch(/last_used_at < now\(\) - interval '1 minute'/);
  });

  it("verifies a fresh key's 100 simultaneous first uses with one lookup, and still refuses a wrong secret with its prefix", async () => {
    const { state, db } = fakeDatabase(secret);
    const auth = new ApiKeyAuthenticator(db, log, () => 20_000);
    const wrong = `${secret.slice(0, -2)}${secret.endsWith("AA") ? "BB" : "AA"}`;
    const principals = await Promise.all(Array.from({ length: 101 }, (_, i) => auth.authenticate(i === 50 ? wrong : secret)));
    // The cache's fetch shares one read of the row among every request waiting for it.
    expect(state.lookups).toBe(1);
    expect(principals.filter((p) => p === null)).toHaveLength(1);
    expect(principals[50]).toBeNull();
    expect(principals.filter((p) => p?.apiKeyId === "key_1")).toHaveLength(100);
  });

  it("does not record use for a wrong secret", async () => {
    const { state, db } = fakeDatabase(secret);
    const auth = new ApiKeyAuthenticator(db, log, () => 0);
    const wrong = `${secret.slice(0, -2)}${secret.endsWith("AA") ? "BB" : "AA"}`;
    expect(await auth.authenticate(wrong)).toBeNull();
    expect(state.writes).toHaveLength(0);
  });
});
