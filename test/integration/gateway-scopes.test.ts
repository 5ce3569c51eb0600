/** What each API key scope may do, end to end, and lastUsedAt after use. */
import { describe, expect, it } from "vitest";
import { useGateway } from "../helpers/gateway-fixture.js";
import { codeOf, createTenant, gql, waitFor } from "../helpers/platform.js";

const PROBES = {
  READ: `{ tasks { totalCount } queues { name } }`,
  SUBMIT: `mutation { submitTask(input: { type: "probe" }) { id } }`,
  WORK: `mutation { leaseTasks(queue: "default", workerId: "probe") { leaseToken } }`,
  MANAGE: `mutation { resumeQueue(name: "default") { name } }`,
} as const;

/** Mirrors apps/gateway/src/auth/scopes.ts: the contract of each scope. */
const EXPECTED: Record<string, Array<keyof typeof PROBES>> = {
  full: ["READ", "SUBMIT", "WORK", "MANAGE"],
  submit: ["READ", "SUBMIT"],
  worker: ["READ", "WORK"],
  read: ["READ"],
};

describe("API key scopes", () => {
  const platform = useGateway();

  it("allow exactly their operations; the rest is FORBIDDEN", async () => {
    const { apiKey } = await createTenant(platform.gateway);
    for (const [scope, allowed] of Object.entries(EXPECTED)) {
      const created = await gql<{ createApiKey: { secret: string } }>(
        platform.gateway.url,
        `mutation ($s: [String!]) { createApiKey(name: "probe", scopes: $s) { secret } }`,
        { s: [scope] },
        apiKey,
      );
      const secret = created.data?.createApiKey.secret;
      const outcome: Record<string, string> = {};
      for (const [permission, query] of Object.entries(PROBES)) outcome[permission] = codeOf(await gql(platform.gateway.url, query, {}, secret)) ?? "OK";
      const expected = Object.fromEntries(Object.keys(PROBES).map((p) => [p, allowed.includes(p as keyof typeof PROBES) ? "OK" : "FORBIDDEN"]));
      expect({ scope, outcome }).toEqual({ scope, outcome: expected });
    }
  });

  it("sets lastUsedAt once a key is used", async () => {
    const { apiKey } = await createTenant(platform.gateway);
    const created = await gql<{ createApiKey: { apiKey: { id: string; lastUsedAt: string | null }; secret: string } }>(
      platform.gateway.url,
      `mutation { createApiKey(name: "fresh", scopes: ["read"]) { apiKey { id lastUsedAt } secret } }`,
      {},
      apiKey,
    );
    const key = created.data?.createApiKey;
    expect(key?.apiKey.lastUsedAt).toBeNull();
    await gql(platform.gateway.url, `{ tenant { id } }`, {}, key?.secret);
    await waitFor(async () => {
      const list = await gql<{ apiKeys: Array<{ id: string; lastUsedAt: string | null }> }>(platform.gateway.url, `{ apiKeys { id lastUsedAt } }`, {}, apiKey);
      return list.data?.apiKeys.find((k) => k.id === key?.apiKey.id)?.lastUsedAt != null;
    }, 2_000);
  });
});
