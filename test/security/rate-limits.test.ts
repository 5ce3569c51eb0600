/**
 * Flooding through two gateway processes at once (the limits live in Redis
 * and Postgres, not in one instance): 50 parallel clients spread over both
 * never get more than burst + rate × elapsed, and quotas admit exactly their
 * limit, batches all or nothing. Single-instance versions, and a neighbour
 * tenant going unhindered: test/integration/tenancy-isolation.test.ts and
 * gateway-limits.test.ts.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { codeOf, type GqlResponse } from "../helpers/platform.js";
import { useAttackPlatform } from "./attack-platform.js";

const CLIENTS = 50;
const REQUESTS_PER_CLIENT = 6;

describe("security: rate limits and quotas under 50 parallel clients on two gateways", () => {
  const platform = useAttackPlatform();
  let urls: string[];

  beforeAll(async () => {
    urls = [platform.url, (await platform.startGateway()).url];
  });

  async function tenantWith(name: string, limits: Record<string, number>): Promise<{ id: string; key: string }> {
    const res = await platform.call<{ createTenant: { tenant: { id: string }; apiKey: string } }>(
      `mutation ($i: CreateTenantInput!) { createTenant(input: $i) { tenant { id } apiKey } }`,
      { i: { name, limits } },
      platform.adminToken,
    );
    const created = res.data?.createTenant;
    if (!created) throw new Error(JSON.stringify(res.errors));
    return { id: created.tenant.id, key: created.apiKey };
  }

  it("holds a tenant to burst + rate × elapsed, with RATE_LIMITED, 429 and Retry-After for the rest", async () => {
    // A fixed number of requests, not a time window: on a slow machine 300 requests still outrun 1 token a second.
    const t = await tenantWith("flood", { apiRatePerSecond: 1, apiBurst: 20 });
    const started = Date.now();
    let admitted = 0;
    const refusals = new Map<string, number>();
    await Promise.all(
      Array.from({ length: CLIENTS }, async (_, i) => {
        for (let n = 0; n < REQUESTS_PER_CLIENT; n++) {
          const res = await platform.call(`{ tenant { id } }`, {}, t.key, urls[i % urls.length]);
          if (res.status === 200 && res.errors === undefined) admitted += 1;
          else {
            const kind = `${res.status} ${codeOf(res)} retry-after=${Number(res.headers.get("retry-after")) >= 1}`;
            refusals.set(kind, (refusals.get(kind) ?? 0) + 1);
          }
        }
      }),
    );
    const elapsed = (Date.now() - started) / 1000;
    expect(admitted).toBeGreaterThanOrEqual(20);
    expect(admitted).toBeLessThanOrEqual(20 + 1 * elapsed);
    expect([...refusals.keys()]).toEqual(["429 RATE_LIMITED retry-after=true"]);
    expect(admitted + (refusals.get("429 RATE_LIMITED retry-after=true") ?? 0)).toBe(CLIENTS * REQUESTS_PER_CLIENT);
  });

  it("admits exactly maxPendingTasks of 50 parallel submissions, and nothing more", async () => {
    const t = await tenantWith("pending", { maxPendingTasks: 20 });
    const results = await Promise.all(
      Array.from({ length: CLIENTS }, (_, i) => platform.call(`mutation { submitTask(input: { type: "p" }) { id } }`, {}, t.key, urls[i % urls.length])),
    );
    const codes = results.map((r) => codeOf(r) ?? "OK");
    expect(codes.filter((c) => c === "OK")).toHaveLength(20);
    expect(codes.filter((c) => c !== "OK")).toEqual(Array(30).fill("QUOTA_EXCEEDED"));
    const rows = await platform.database.db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM tasks WHERE tenant_id = $1`, [t.id]);
    expect(rows.rows[0]?.n).toBe(20);
  });

  it("admits dailyTaskQuota whole batches only: 50 parallel batches of 3 against a quota of 20", async () => {
    const t = await tenantWith("daily", { dailyTaskQuota: 20 });
    const results: Array<GqlResponse<{ submitTasks: Array<{ id: string }> }>> = await Promise.all(
      Array.from({ length: CLIENTS }, (_, i) =>
        platform.call<{ submitTasks: Array<{ id: string }> }>(`mutation { submitTasks(inputs: [{ type: "a" }, { type: "b" }, { type: "c" }]) { id } }`, {}, t.key, urls[i % urls.length]),
      ),
    );
    const admitted = results.filter((r) => r.data?.submitTasks?.length === 3);
    expect(admitted).toHaveLength(6);
    expect(results.filter((r) => codeOf(r) === "QUOTA_EXCEEDED")).toHaveLength(CLIENTS - 6);
    const rows = await platform.database.db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM tasks WHERE tenant_id = $1`, [t.id]);
    expect(rows.rows[0]?.n).toBe(18);
  });

  it("leaks none of the planted secrets into logs, metrics or error messages", async () => {
    expect(await platform.leaks()).toEqual([]);
  });
});
