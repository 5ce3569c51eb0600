/**
 * Console users and the gateway additions the console relies on: operator
 * creation, sign-in with an expiring session key, discardTask and queueActivity.
 */
import { describe, expect, it } from "vitest";
import { useGateway } from "../helpers/gateway-fixture.js";
import { codeOf, createTenant, gql } from "../helpers/platform.js";

const CREATE_USER = `mutation ($t: ID!, $e: String!, $p: String!) { createConsoleUser(tenantId: $t, email: $e, password: $p) { id tenantId email createdAt } }`;
const SIGN_IN = `mutation ($e: String!, $p: String!) { consoleSignIn(email: $e, password: $p) { token apiKeyId expiresAt user { id tenantId email } } }`;

interface Session {
  token: string;
  apiKeyId: string;
  expiresAt: string;
  user: { id: string; tenantId: string; email: string };
}

describe("console users", () => {
  const platform = useGateway();
  const admin = () => platform.gateway.adminToken;
  const url = () => platform.gateway.url;

  it("the operator creates a user; the password is stored as a salted scrypt hash", async () => {
    const tenant = await createTenant(platform.gateway);
    const res = await gql<{ createConsoleUser: { id: string; tenantId: string; email: string } }>(url(), CREATE_USER, { t: tenant.tenantId, e: " Ada@Example.com ", p: "correct horse battery" }, admin());
    expect(res.errors).toBeUndefined();
    expect(res.data?.createConsoleUser).toMatchObject({ tenantId: tenant.tenantId, email: "ada@example.com" });
    expect(res.data?.createConsoleUser.id).toMatch(/^usr_[0-9a-f]{32}$/);
    const row = await platform.database.db.pool.query("SELECT password_hash FROM console_users WHERE email = 'ada@example.com'");
    expect(row.rows[0].password_hash).toMatch(/^scrypt\$\d+\$8\$1\$/);
    expect(row.rows[0].password_hash).not.toContain("correct horse");
  });

  it("refuses a tenant key, a duplicate email, an unknown tenant and a short password", async () => {
    const tenant = await createTenant(platform.gateway);
    const input = { t: tenant.tenantId, e: "dup@example.com", p: "long enough password" };
    expect(codeOf(await gql(url(), CREATE_USER, input, tenant.apiKey))).toBe("FORBIDDEN");
    expect(codeOf(await gql(url(), CREATE_USER, input))).toBe("UNAUTHENTICATED");
    expect((await gql(url(), CREATE_USER, input, admin())).errors).toBeUndefined();
    expect(codeOf(await gql(url(), CREATE_USER, input, admin()))).toBe("CONFLICT");
    expect(codeOf(await gql(url(), CREATE_USER, { ...input, t: "ten_0190f0f0f0f07000800000000000000a", e: "x@example.com" }, admin()))).toBe("NOT_FOUND");
    expect(codeOf(await gql(url(), CREATE_USER, { ...input, e: "short@example.com", p: "short" }, admin()))).toBe("BAD_USER_INPUT");
    expect(codeOf(await gql(url(), CREATE_USER, { ...input, e: "not-an-email" }, admin()))).toBe("BAD_USER_INPUT");
  });

  it("signs in with a 12 h tenant key; wrong password and unknown email fail alike", async () => {
    const tenant = await createTenant(platform.gateway);
    await gql(url(), CREATE_USER, { t: tenant.tenantId, e: "grace@example.com", p: "a perfectly fine password" }, admin());
    const res = await gql<{ consoleSignIn: Session }>(url(), SIGN_IN, { e: "GRACE@example.com", p: "a perfectly fine password" });
    expect(res.errors).toBeUndefined();
    const session = res.data!.consoleSignIn;
    expect(session.user).toMatchObject({ tenantId: tenant.tenantId, email: "grace@example.com" });
    const hours = (new Date(session.expiresAt).getTime() - Date.now()) / 3_600_000;
    expect(hours).toBeGreaterThan(11.9);
    expect(hours).toBeLessThanOrEqual(12);
    const me = await gql<{ tenant: { id: string } }>(url(), `{ tenant { id } }`, undefined, session.token);
    expect(me.data?.tenant.id).toBe(tenant.tenantId);
    const keys = await gql<{ apiKeys: { id: string; name: string; scopes: string[]; expiresAt: string | null }[] }>(url(), `{ apiKeys { id name scopes expiresAt } }`, undefined, session.token);
    expect(keys.data?.apiKeys.find((k) => k.id === session.apiKeyId)).toMatchObject({ name: "console session grace@example.com", scopes: ["full"], expiresAt: session.expiresAt });

    const wrong = await gql(url(), SIGN_IN, { e: "grace@example.com", p: "a perfectly fine passworD" });
    const unknown = await gql(url(), SIGN_IN, { e: "nobody@example.com", p: "a perfectly fine password" });
    const malformed = await gql(url(), SIGN_IN, { e: "nobody", p: "" });
    for (const failed of [wrong, unknown, malformed]) {
      expect(codeOf(failed)).toBe("UNAUTHENTICATED");
      expect(failed.errors?.[0]?.message).toBe("Invalid or missing credentials");
      expect(failed.data).toBeNull();
    }
  });

  it("an expired session key stops authenticating", async () => {
    const tenant = await createTenant(platform.gateway);
    await gql(url(), CREATE_USER, { t: tenant.tenantId, e: "expiring@example.com", p: "a perfectly fine password" }, admin());
    const session = (await gql<{ consoleSignIn: Session }>(url(), SIGN_IN, { e: "expiring@example.com", p: "a perfectly fine password" })).data!.consoleSignIn;
    await platform.database.db.pool.query("UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = $1", [session.apiKeyId]);
    // The authenticator caches a key row for at most 2 s.
    await new Promise((r) => setTimeout(r, 2_100));
    expect(codeOf(await gql(url(), `{ tenant { id } }`, undefined, session.token))).toBe("UNAUTHENTICATED");
  });
});

describe("discardTask and queueActivity", () => {
  const platform = useGateway();

  it("discards a dead task (DEAD -> CANCELLED, out of the dead-letter queue) and counts the failure", async () => {
    const tenant = await createTenant(platform.gateway);
    const api = <T>(q: string, v?: Record<string, unknown>) => gql<T>(platform.gateway.url, q, v, tenant.apiKey);
    const submitted = await api<{ submitTask: { id: string } }>(`mutation { submitTask(input: {type: "doomed", queue: "default"}) { id } }`);
    const id = submitted.data!.submitTask.id;
    const leased = await api<{ leaseTasks: { leaseToken: string }[] }>(`mutation { leaseTasks(queue: "default", workerId: "w") { leaseToken } }`);
    const token = leased.data!.leaseTasks[0]!.leaseToken;
    await api(`mutation ($t: ID!, $l: String!) { failTask(taskId: $t, leaseToken: $l, error: "nope", retryable: false) { status } }`, { t: id, l: token });
    expect(codeOf(await api(`mutation { discardTask(id: "task_0190f0f0f0f07000800000000000000a") { id } }`))).toBe("NOT_FOUND");

    const discarded = await api<{ discardTask: { status: string; lastError: string; attempts: number } }>(`mutation ($id: ID!) { discardTask(id: $id) { status lastError attempts } }`, { id });
    expect(discarded.data?.discardTask).toEqual({ status: "CANCELLED", lastError: "nope", attempts: 1 });
    const dlq = await api<{ deadLetterTasks: { totalCount: number } }>(`{ deadLetterTasks { totalCount } }`);
    expect(dlq.data?.deadLetterTasks.totalCount).toBe(0);
    expect(codeOf(await api(`mutation ($id: ID!) { discardTask(id: $id) { id } }`, { id }))).toBe("CONFLICT");
    const events = await platform.database.db.pool.query("SELECT from_status, to_status, reason FROM task_events WHERE task_id = $1 ORDER BY id DESC LIMIT 1", [id]);
    expect(events.rows[0]).toEqual({ from_status: "DEAD", to_status: "CANCELLED", reason: "discard" });

    const activity = await api<{ queueActivity: { queue: string; buckets: { start: string; succeeded: number; failed: number }[] }[] }>(`{ queueActivity { queue buckets { start succeeded failed } } }`);
    const defaultQueue = activity.data?.queueActivity.find((q) => q.queue === "default");
    expect(defaultQueue?.buckets).toHaveLength(12);
    expect(defaultQueue?.buckets.reduce((n, b) => n + b.failed, 0)).toBe(1);
    expect(defaultQueue?.buckets.at(-1)?.failed).toBe(1);
    expect(codeOf(await api(`{ queueActivity(minutes: 1440, bucketMinutes: 1) { queue } }`))).toBe("BAD_USER_INPUT");
  });
});
