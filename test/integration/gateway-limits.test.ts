/**
 * Gateway limits: the per-tenant API token bucket (HTTP 429 + Retry-After,
 * batches admitted whole), limit changes within 1 s, operator calls, the
 * global backlog cap (OVERLOADED, 503), query cost and page size caps.
 */
import { buildGatewaySchema } from "@tasklane/gateway/graphql/schema";
import { createKeySpace, createRedis } from "@tasklane/queue";
import { getNamedType, isObjectType } from "graphql";
import { describe, expect, it } from "vitest";
import { createClient } from "graphql-ws";
import WebSocket from "ws";
import { useGateway } from "../helpers/gateway-fixture.js";
import { httpToWs, openSubscription } from "../helpers/graphql-ws-client.js";
import { codeOf, createTenant, gql, waitFor } from "../helpers/platform.js";

interface Reply {
  status: number;
  headers: Headers;
  body: unknown;
}

async function post(url: string, body: unknown, token?: string): Promise<Reply> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, body: await res.json() };
}

const SUBMIT = { query: `mutation { submitTask(input: { type: "batched" }) { id } }` };
const TENANT = { query: `{ tenant { id } }` };
const UPDATE_TENANT = `mutation ($id: ID!, $limits: TenantLimitsInput!) { updateTenant(id: $id, limits: $limits) { id } }`;

describe("gateway limits", () => {
  const platform = useGateway();

  const taskCount = async (tenantId: string) =>
    (await platform.database.db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM tasks WHERE tenant_id = $1", [tenantId])).rows[0]?.n;

  it("refuses over-limit requests with RATE_LIMITED, HTTP 429, Retry-After, and counts them", async () => {
    const { apiKey } = await createTenant(platform.gateway, "limited", { apiRatePerSecond: 0.2, apiBurst: 2 });
    expect((await post(platform.gateway.url, TENANT, apiKey)).status).toBe(200);
    expect((await post(platform.gateway.url, TENANT, apiKey)).status).toBe(200);
    const refused = await post(platform.gateway.url, TENANT, apiKey);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ errors: [{ message: "Rate limit exceeded", extensions: { code: "RATE_LIMITED", retryAfterSeconds: expect.any(Number) } }] });
    const seconds = Number(refused.headers.get("retry-after"));
    // One token at 0.2/s: about 5 s away.
    expect(seconds).toBeGreaterThanOrEqual(4);
    expect(seconds).toBeLessThanOrEqual(6);
    const metrics = await (await fetch(platform.gateway.url.replace("/graphql", "/metrics"))).text();
    expect(metrics).toMatch(/tasklane_rate_limited_total\{[^}]*kind="api"[^}]*\} [1-9]/);
  });

  it("admits a batch whole (one token per operation) or refuses it whole, having run nothing", async () => {
    const { tenantId, apiKey } = await createTenant(platform.gateway, "batches", { apiRatePerSecond: 0.05, apiBurst: 3 });
    const admitted = await post(platform.gateway.url, [SUBMIT, SUBMIT], apiKey);
    expect(admitted.status).toBe(200);
    expect(admitted.body).toHaveLength(2);
    const refused = await post(platform.gateway.url, [SUBMIT, SUBMIT], apiKey);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).not.toBeNull();
    expect(refused.body).toMatchObject({ errors: [{ extensions: { code: "RATE_LIMITED" } }] });
    expect(await taskCount(tenantId)).toBe(2);
    // The refused batch took nothing: the one token left still admits one operation.
    expect((await post(platform.gateway.url, [TENANT], apiKey)).status).toBe(200);
    const tooBig = await post(platform.gateway.url, [SUBMIT, SUBMIT, SUBMIT, SUBMIT], apiKey);
    expect(tooBig.body).toMatchObject({ errors: [{ message: expect.stringContaining("exceeds the API burst of 3"), extensions: { code: "BAD_USER_INPUT" } }] });
    expect(await taskCount(tenantId)).toBe(2);
  });

  it("takes a tenant's tokens from Redis an allotment at a time, and never admits more than the bucket gave", async () => {
    const redis = createRedis(platform.redis.url, "gateway-limits-test");
    try {
      // 400/s with a burst of 40: an allotment of 10 tokens beyond each call that reaches the bucket.
      const { tenantId, apiKey } = await createTenant(platform.gateway, "allotted", { apiRatePerSecond: 400, apiBurst: 40 });
      const bucket = createKeySpace(platform.redis.prefix).apiBucket(tenantId);
      const updates = new Set<string | null>();
      for (let i = 0; i < 33; i++) {
        expect((await post(platform.gateway.url, TENANT, apiKey)).status).toBe(200);
        // The script stamps the bucket with Redis's clock (µs) each time it runs, and only then.
        updates.add(await redis.hget(bucket, "ts"));
      }
      expect(updates.has(null)).toBe(false);
      // 3 runs for 33 calls when every allotment lasts; one per call without allotments.
      expect(updates.size).toBeLessThanOrEqual(16);

      // 20/s with a burst of 8 takes one token beyond a call: flooded, it admits no more than burst + rate × elapsed.
      const flooded = await createTenant(platform.gateway, "allotted-flood", { apiRatePerSecond: 20, apiBurst: 8 });
      const started = Date.now();
      const statuses = (
        await Promise.all(Array.from({ length: 8 }, async () => Promise.all(Array.from({ length: 6 }, () => post(platform.gateway.url, TENANT, flooded.apiKey)))))
      ).flat().map((r) => r.status);
      const elapsedSeconds = (Date.now() - started) / 1000;
      const admitted = statuses.filter((s) => s === 200).length;
      expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
      // An allotment (one token at this rate) that lapses unused after its second is lost, one at a time.
      expect(admitted).toBeGreaterThanOrEqual(8 - Math.ceil(elapsedSeconds));
      expect(admitted).toBeLessThanOrEqual(8 + 20 * elapsedSeconds);
    } finally {
      redis.disconnect();
    }
  });

  it("applies a limit change within a second, and never limits operator calls by tenant buckets", async () => {
    const { tenantId, apiKey } = await createTenant(platform.gateway, "changing", { apiRatePerSecond: 0.01, apiBurst: 1 });
    expect((await post(platform.gateway.url, TENANT, apiKey)).status).toBe(200);
    expect((await post(platform.gateway.url, TENANT, apiKey)).status).toBe(429);
    for (let i = 0; i < 30; i++) {
      const res = await gql(platform.gateway.url, UPDATE_TENANT, { id: tenantId, limits: { weight: 1 + (i % 3) } }, platform.gateway.adminToken);
      expect(res.status).toBe(200);
      expect(res.errors).toBeUndefined();
    }
    await gql(platform.gateway.url, UPDATE_TENANT, { id: tenantId, limits: { apiRatePerSecond: 1000, apiBurst: 1000 } }, platform.gateway.adminToken);
    const changed = Date.now();
    await waitFor(async () => (await post(platform.gateway.url, TENANT, apiKey)).status === 200, 3_000, 50);
    expect(Date.now() - changed).toBeLessThan(1_500);
  });

  it("answers OVERLOADED with 503 and Retry-After once the platform backlog reaches GLOBAL_MAX_PENDING_TASKS", async () => {
    const pending = async () =>
      Number((await platform.database.db.pool.query<{ n: string }>("SELECT coalesce(sum(pending), 0)::text AS n FROM tenant_counters")).rows[0]?.n);
    const capped = await platform.startAnother({ env: { GLOBAL_MAX_PENDING_TASKS: String((await pending()) + 3) } });
    const { apiKey } = await createTenant(capped, "backlog");
    const submit = (n: number) =>
      gql(capped.url, `mutation ($i: [SubmitTaskInput!]!) { submitTasks(inputs: $i) { id } }`, { i: Array.from({ length: n }, () => ({ type: "fill" })) }, apiKey);
    await new Promise((r) => setTimeout(r, 1_200));
    expect(codeOf(await submit(3))).toBeUndefined();
    await waitFor(async () => codeOf(await submit(1)) === "OVERLOADED", 5_000, 200);
    const refused = await submit(1);
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("5");
    expect(refused.errors?.[0]?.extensions).toMatchObject({ code: "OVERLOADED", retryAfterSeconds: 5 });
    // A workflow's tasks join the same backlog: refused too, nothing written.
    const workflow = await gql(
      capped.url,
      `mutation ($i: SubmitWorkflowInput!) { submitWorkflow(input: $i) { id } }`,
      { i: { name: "past the cap", tasks: [{ key: "a", type: "fill" }, { key: "b", type: "fill", dependsOn: ["a"] }] } },
      apiKey,
    );
    expect(workflow.status).toBe(503);
    expect(workflow.errors?.[0]?.extensions).toMatchObject({ code: "OVERLOADED", retryAfterSeconds: 5 });
    expect((await gql<{ workflows: unknown[] }>(capped.url, `{ workflows { id } }`, {}, apiKey)).data?.workflows).toEqual([]);
    // Reads are not shed.
    expect(codeOf(await gql(capped.url, `{ tasks { totalCount } }`, {}, apiKey))).toBeUndefined();
  });

  it("refuses, before execution, a page above 500 on every field that takes first", async () => {
    const { apiKey } = await createTenant(platform.gateway);
    const schema = await buildGatewaySchema();
    const paged = Object.values(schema.getQueryType()?.getFields() ?? {}).filter((f) => f.args.some((a) => a.name === "first"));
    expect(paged.map((f) => f.name)).toEqual(expect.arrayContaining(["tasks", "deadLetterTasks", "workflows", "webhookDeliveries"]));
    for (const field of paged) {
      const selection = isObjectType(getNamedType(field.type)) ? " { __typename }" : "";
      const res = await gql(platform.gateway.url, `query ($n: Int) { ${field.name}(first: $n)${selection} }`, { n: 501 }, apiKey);
      expect({ field: field.name, code: codeOf(res), message: res.errors?.[0]?.message }).toMatchObject({
        field: field.name,
        code: "BAD_USER_INPUT",
        message: expect.stringContaining("at most 500"),
      });
    }
    const nested = await gql(platform.gateway.url, `{ schedules { runs(first: 1000) { id } } }`, {}, apiKey);
    expect(codeOf(nested)).toBe("BAD_USER_INPUT");
    expect(codeOf(await gql(platform.gateway.url, `{ tasks(first: 500) { totalCount } }`, {}, apiKey))).toBeUndefined();
  });

  it("refuses an operation over the cost budget with BAD_USER_INPUT before it runs", async () => {
    const { apiKey } = await createTenant(platform.gateway);
    const page = `tasks(first: 500) { nodes { id type status attemptHistory { number outcome error } } totalCount }`;
    const costly = `{ ${Array.from({ length: 5 }, (_, i) => `p${i}: ${page}`).join(" ")} }`;
    const res = await gql(platform.gateway.url, costly, {}, apiKey);
    expect(res.errors?.[0]).toMatchObject({ message: expect.stringMatching(/^Query cost \d+ exceeds the budget of 100000/), extensions: { code: "BAD_USER_INPUT" } });
    // Refused before execution: no partial data at all.
    expect(res.data).toBeUndefined();
    expect(codeOf(await gql(platform.gateway.url, `{ ${page} }`, {}, apiKey))).toBeUndefined();
  });
});

describe("gateway limits over WebSocket", () => {
  const platform = useGateway();

  /** A graphql-ws client of one socket; `run` sends one operation on it and resolves with its errors' codes. */
  function socketOf(apiKey: string) {
    const client = createClient({ url: httpToWs(platform.gateway.url), webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${apiKey}` }, retryAttempts: 0 });
    const run = (query: string) =>
      new Promise<string[]>((resolve) => {
        const codes: string[] = [];
        client.subscribe(
          { query },
          {
            next: (result) => codes.push(...(result.errors ?? []).map((e) => String(e.extensions?.code))),
            error: (error) => resolve([...codes, ...(Array.isArray(error) ? error.map((e: { extensions?: { code?: string } }) => String(e.extensions?.code)) : ["socket"])]),
            complete: () => resolve(codes),
          },
        );
      });
    return { client, run };
  }

  it("counts every operation a socket starts against the tenant's API rate, as over HTTP", async () => {
    const { apiKey } = await createTenant(platform.gateway, "ws-limited", { apiRatePerSecond: 0.2, apiBurst: 2 });
    const { client, run } = socketOf(apiKey);
    try {
      const codes: string[][] = [];
      for (let i = 0; i < 6; i++) codes.push(await run(`mutation { submitTask(input: { type: "over-ws" }) { id } }`));
      expect(codes.filter((c) => c.length === 0)).toHaveLength(2);
      expect(codes.filter((c) => c.includes("RATE_LIMITED"))).toHaveLength(4);
      const made = await platform.database.db.pool.query(`SELECT count(*)::int AS n FROM tasks WHERE type = 'over-ws'`);
      expect(made.rows[0].n).toBe(2);
    } finally {
      await client.dispose();
    }
  });

  it("holds a socket to 100 operations at once, and a tenant to 100 sockets per gateway", async () => {
    const { apiKey } = await createTenant(platform.gateway, "ws-many", { apiRatePerSecond: 10_000, apiBurst: 10_000 });
    const { client } = socketOf(apiKey);
    const refusals: string[] = [];
    const stops: Array<() => void> = [];
    try {
      for (let i = 0; i < 101; i++) {
        stops.push(client.subscribe({ query: `subscription { taskUpdated { taskId } }` }, { next: () => undefined, error: (e) => refusals.push(JSON.stringify(e)), complete: () => undefined }));
      }
      await waitFor(async () => refusals.length > 0, 10_000, 20);
      expect(refusals).toHaveLength(1);
      expect(refusals[0]).toContain("QUOTA_EXCEEDED");
    } finally {
      for (const stop of stops) stop();
      await client.dispose();
    }

    const sockets = Array.from({ length: 101 }, () => openSubscription(httpToWs(platform.gateway.url), `Bearer ${apiKey}`, `subscription { taskUpdated { taskId } }`));
    try {
      await waitFor(async () => sockets.filter((s) => s.connected).length + sockets.filter((s) => s.closeEvent !== null).length === 101, 20_000, 50);
      expect(sockets.filter((s) => s.closeEvent?.code === 4429)).toHaveLength(1);
      expect(sockets.filter((s) => s.connected)).toHaveLength(100);
    } finally {
      await Promise.all(sockets.map((s) => s.close()));
    }
  });
});
