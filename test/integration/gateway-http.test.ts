/** HTTP surface: health, metrics, error masking and throttling status, request limits, introspection. */
import { readFile } from "node:fs/promises";
import { gzipSync } from "node:zlib";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { OverloadedError, RateLimitedError } from "@tasklane/core";
import type { TaskService } from "@tasklane/gateway/services/task-service";
import { buildClientSchema, getIntrospectionQuery, lexicographicSortSchema, printSchema, type IntrospectionQuery } from "graphql";
import { afterAll, describe, expect, it } from "vitest";
import { useGateway } from "../helpers/gateway-fixture.js";
import { codeOf, createTenant, gql, startGateway, type StartedGateway } from "../helpers/platform.js";
import { seedPushQueue } from "../helpers/seed.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** A task seam whose reads fail the way the test needs. */
function failingTasks(error: () => unknown): TaskService {
  const fail = async (): Promise<never> => {
    throw error();
  };
  return { submit: fail, submitWithin: fail, submitRefs: fail, get: fail, list: fail, attempts: fail, events: fail, cancel: fail, redrive: fail };
}

const TASK = `query ($id: ID!) { task(id: $id) { id } }`;
const SOME_TASK_ID = "task_0190f0f0f0f07000800000000000000a";

async function post(url: string, body: unknown, token?: string): Promise<{ status: number; body: unknown; headers: Headers }> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, body: await res.json() };
}

describe("gateway HTTP surface", () => {
  const platform = useGateway();
  const standalone: StartedGateway[] = [];
  afterAll(async () => {
    await Promise.all(standalone.map((g) => g.close()));
  });

  it("GET /healthz is 200 when Postgres and Redis answer, 503 when Redis does not", async () => {
    const ok = await fetch(platform.gateway.url.replace("/graphql", "/healthz"));
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ status: "ok" });

    const noRedis = await startGateway({
      databaseUrl: platform.database.url,
      redis: { url: "redis://127.0.0.1:1/0", prefix: "none", cleanup: async () => undefined },
    });
    standalone.push(noRedis);
    const started = Date.now();
    const down = await fetch(noRedis.url.replace("/graphql", "/healthz"));
    expect(down.status).toBe(503);
    expect(Date.now() - started).toBeLessThan(2_500);
  });

  it("answers a PUSH submission while Redis is down, within a bounded wait: the task is QUEUED and its outbox row left to deliver it", async () => {
    const tenant = await createTenant(platform.gateway);
    await seedPushQueue(platform.database.db, tenant.tenantId, "hooks", "http://127.0.0.1:9/never");
    const noRedis = await startGateway({
      databaseUrl: platform.database.url,
      redis: { url: "redis://127.0.0.1:1/0", prefix: "none", cleanup: async () => undefined },
    });
    standalone.push(noRedis);
    const started = Date.now();
    const res = await gql<{ submitTask: { id: string; status: string } }>(noRedis.url, `mutation { submitTask(input: { type: "x", queue: "hooks" }) { id status } }`, {}, tenant.apiKey);
    // Two seconds at most for the fast path, and the rest of the call besides.
    expect(Date.now() - started).toBeLessThan(8_000);
    expect(res.errors).toBeUndefined();
    expect(res.data?.submitTask.status).toBe("QUEUED");
    const outbox = await platform.database.db.pool.query(`SELECT count(*)::int AS n FROM outbox WHERE $1 = ANY(task_ids)`, [res.data?.submitTask.id]);
    expect(outbox.rows[0].n).toBe(1);
  });

  it("GET /metrics serves Prometheus text without a credential", async () => {
    const { apiKey } = await createTenant(platform.gateway);
    await gql(platform.gateway.url, `{ tenant { id } }`, {}, apiKey);
    await gql(platform.gateway.url, `{ tenant { id } }`);
    const res = await fetch(platform.gateway.url.replace("/graphql", "/metrics"));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/plain");
    const text = await res.text();
    expect(text).toMatch(/tasklane_api_requests_total\{operation="tenant",code="OK",app="gateway"\} [1-9]/);
    expect(text).toMatch(/tasklane_api_requests_total\{operation="tenant",code="UNAUTHENTICATED",app="gateway"\} [1-9]/);
    expect(text).toContain("# TYPE tasklane_tasks_submitted_total counter");
    expect(text).toContain("process_cpu_user_seconds_total");
  });

  it("counts the tasks submissions create: a repeat of an idempotency key creates none", async () => {
    const { apiKey } = await createTenant(platform.gateway);
    const submitted = async () => {
      const text = await (await fetch(platform.gateway.url.replace("/graphql", "/metrics"))).text();
      return Number(/^tasklane_tasks_submitted_total(?:\{[^}]*\})? (\d+)/m.exec(text)?.[1]);
    };
    const before = await submitted();
    const SUBMIT = `mutation ($i: [SubmitTaskInput!]!) { submitTasks(inputs: $i) { id } }`;
    for (let i = 0; i < 3; i++) expect((await gql(platform.gateway.url, SUBMIT, { i: [{ type: "once", idempotencyKey: "k-1" }] }, apiKey)).errors).toBeUndefined();
    expect((await gql(platform.gateway.url, SUBMIT, { i: [{ type: "once", idempotencyKey: "k-1" }, { type: "new" }] }, apiKey)).errors).toBeUndefined();
    // Five asked for, two created: the first "k-1" and "new".
    expect((await submitted()) - before).toBe(2);
  });

  it("masks unexpected errors as INTERNAL_SERVER_ERROR with a requestId and no details", async () => {
    const broken = await platform.startAnother({
      deps: { taskService: failingTasks(() => new Error('relation "tasks" does not exist: SELECT secret_hash FROM api_keys')) },
    });
    const { apiKey } = await createTenant(broken);
    const res = await post(broken.url, { query: TASK, variables: { id: SOME_TASK_ID } }, apiKey);
    const text = JSON.stringify(res.body);
    expect(res.body).toMatchObject({
      errors: [{ message: "Internal server error", path: ["task"], extensions: { code: "INTERNAL_SERVER_ERROR", requestId: res.headers.get("x-request-id") } }],
    });
    expect(text).not.toMatch(/SELECT|relation|stack|at .*\.js/);
  });

  it("masks an unexpected failure before any resolver runs (authentication) with the request's id too", async () => {
    const { apiKey } = await createTenant(platform.gateway);
    // The key is looked up in a database that does not exist: an error no client can act on.
    const url = new URL(platform.database.url);
    url.pathname = "/tl_no_such_database";
    const broken = await startGateway({ databaseUrl: url.toString(), redis: { url: "redis://127.0.0.1:1/0", prefix: "none", cleanup: async () => undefined } });
    standalone.push(broken);
    const res = await post(broken.url, { query: "{ tenant { id } }" }, apiKey);
    expect(res.status).toBe(500);
    expect(res.headers.get("x-request-id")).toBeTruthy();
    expect(res.body).toEqual({ errors: [{ message: "Internal server error", extensions: { code: "INTERNAL_SERVER_ERROR", requestId: res.headers.get("x-request-id") } }] });
  });

  it("stops a long-polling lease whose client went away: work arriving afterwards is left for a live worker", async () => {
    const { apiKey } = await createTenant(platform.gateway);
    const client = new AbortController();
    const polling = fetch(platform.gateway.url, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${apiKey}` },
      body: JSON.stringify({ query: `mutation { leaseTasks(queue: "default", workerId: "gone", waitSeconds: 5) { leaseToken } }` }),
      signal: client.signal,
    }).catch((error: unknown) => error);
    await new Promise((r) => setTimeout(r, 300)); // the call found nothing and waits
    client.abort();
    await polling;
    await new Promise((r) => setTimeout(r, 100));
    const submitted = await gql<{ submitTask: { id: string } }>(platform.gateway.url, `mutation { submitTask(input: { type: "late" }) { id } }`, {}, apiKey);
    const id = submitted.data!.submitTask.id;
    // The dead poll would have been woken by this task's doorbell and leased it at once.
    await new Promise((r) => setTimeout(r, 700));
    const read = await gql<{ task: { status: string; attempts: number } }>(platform.gateway.url, `query ($id: ID!) { task(id: $id) { status attempts } }`, { id }, apiKey);
    expect(read.data!.task).toEqual({ status: "QUEUED", attempts: 0 });
  });

  it("answers RATE_LIMITED with 429 and OVERLOADED with 503, both with Retry-After", async () => {
    let next: unknown = new RateLimitedError(2.2);
    const throttled = await platform.startAnother({ deps: { taskService: failingTasks(() => next) } });
    const { apiKey } = await createTenant(throttled);
    const limited = await post(throttled.url, { query: TASK, variables: { id: SOME_TASK_ID } }, apiKey);
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("3");
    expect(limited.body).toMatchObject({ errors: [{ extensions: { code: "RATE_LIMITED", retryAfterSeconds: 3 } }] });
    next = new OverloadedError(5);
    const overloaded = await post(throttled.url, { query: TASK, variables: { id: SOME_TASK_ID } }, apiKey);
    expect(overloaded.status).toBe(503);
    expect(overloaded.headers.get("retry-after")).toBe("5");
    expect(overloaded.body).toMatchObject({ errors: [{ extensions: { code: "OVERLOADED", retryAfterSeconds: 5 } }] });
  });

  it("maps malformed requests, parse and validation failures to BAD_USER_INPUT", async () => {
    const { apiKey } = await createTenant(platform.gateway);
    const cases: Array<{ body: unknown; status: number }> = [
      { body: "{not json", status: 400 },
      { body: { query: "{ tenant { id }" }, status: 400 },
      { body: { query: "{ tenant { nope } }" }, status: 400 },
      { body: { query: "query ($n: Int!) { queue(name: $n) { name } }", variables: { n: 1 } }, status: 400 },
      { body: { query: "query ($n: String!) { queue(name: $n) { name } }", variables: { n: 5 } }, status: 400 },
      { body: { query: 'mutation { submitTask(input: { type: "t", runAt: "tomorrow" }) { id } }' }, status: 400 },
    ];
    for (const c of cases) {
      const res = await post(platform.gateway.url, c.body, apiKey);
      expect(res.body, JSON.stringify(c.body)).toMatchObject({ errors: [{ extensions: { code: "BAD_USER_INPUT" } }] });
      expect(res.status, JSON.stringify(c.body)).toBe(c.status);
    }
  });

  it("refuses an operationName the document does not hold (BAD_USER_INPUT) and runs nothing", async () => {
    const { apiKey } = await createTenant(platform.gateway);
    const submitted = async () => (await gql<{ tasks: { totalCount: number } }>(platform.gateway.url, `{ tasks { totalCount } }`, {}, apiKey)).data!.tasks.totalCount;
    const body = { query: 'mutation A { submitTask(input: { type: "named" }) { id } }', operationName: "DoesNotExist" };
    for (let i = 0; i < 2; i++) {
      const res = await post(platform.gateway.url, body, apiKey);
      expect(res.body).toMatchObject({ errors: [{ message: 'Unknown operation named "DoesNotExist".', extensions: { code: "BAD_USER_INPUT" } }] });
      expect(res.status).toBe(400);
    }
    // It had run the document's only operation and answered 500: a client retrying on that submitted twice.
    expect(await submitted()).toBe(0);
    expect((await post(platform.gateway.url, { ...body, operationName: "A" }, apiKey)).status).toBe(200);
    expect(await submitted()).toBe(1);
  });

  it("answers every request envelope on its JSON fast path exactly as through Express", async () => {
    // A JSON POST to /graphql skips Express (http/graphql-endpoint.ts); an extra media-type
    // parameter, which body-parser ignores, sends the same bytes down the Express path.
    const { apiKey } = await createTenant(platform.gateway);
    const send = async (contentType: string, body: Buffer | string): Promise<{ status: number; body: string; type: string | null }> => {
      const res = await fetch(platform.gateway.url, { method: "POST", headers: { "content-type": contentType, authorization: `Bearer ${apiKey}` }, body });
      return { status: res.status, body: await res.text(), type: res.headers.get("content-type") };
    };
    const cases: Array<Buffer | string> = [
      JSON.stringify({ query: "{ __typename }" }),
      JSON.stringify([{ query: "{ __typename }" }, { query: "{ tenant { name } }" }]),
      JSON.stringify({ query: "{ tenant { nope } }" }),
      "{not json",
      "3",
      '"a string"',
      "   ",
      "",
      "\n\t[]",
      JSON.stringify(Array.from({ length: 21 }, () => ({ query: "{ __typename }" }))),
      JSON.stringify({ query: `{ __typename } # ${"x".repeat(101 * 1024)}` }),
      Buffer.from([0x7b, 0x22, 0x71, 0xff, 0x22, 0x3a, 0x31, 0x7d]),
    ];
    for (const body of cases) {
      const fast = await send("application/json", body);
      const viaExpress = await send("application/json; charset=utf-8; profile=x", body);
      expect(fast, String(body).slice(0, 60)).toEqual(viaExpress);
    }
    const statuses = await Promise.all(cases.map(async (body) => (await send("application/json", body)).status));
    expect(statuses).toEqual([200, 200, 400, 400, 400, 400, 400, 400, 400, 400, 413, 400]);
  });

  it("still takes what the fast path leaves to Express: a gzip-compressed body, and GET", async () => {
    const { apiKey } = await createTenant(platform.gateway);
    const res = await fetch(platform.gateway.url, {
      method: "POST",
      headers: { "content-type": "application/json", "content-encoding": "gzip", authorization: `Bearer ${apiKey}` },
      body: gzipSync(JSON.stringify({ query: "{ tenant { name } }" })),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ data: { tenant: { name: expect.any(String) } } });
    const get = await fetch(`${platform.gateway.url}?query=${encodeURIComponent("{ __typename }")}`, {
      headers: { authorization: `Bearer ${apiKey}`, "apollo-require-preflight": "true" },
    });
    expect(await get.json()).toEqual({ data: { __typename: "Query" } });
  });

  it("limits documents to 100 KB, depth 12 and 200 aliases", async () => {
    const { apiKey } = await createTenant(platform.gateway);
    const big = await post(platform.gateway.url, { query: `{ tenant { id } } # ${"x".repeat(101 * 1024)}` }, apiKey);
    expect(big.status).toBe(413);
    expect(big.body).toMatchObject({ errors: [{ extensions: { code: "BAD_USER_INPUT" } }] });

    const deep = `{ ${"f { ".repeat(12)}x${" }".repeat(12)} }`;
    const deepRes = await post(platform.gateway.url, { query: deep }, apiKey);
    expect(JSON.stringify(deepRes.body)).toContain("nested 13 levels deep; the limit is 12");

    const aliases = (n: number) => `{ ${Array.from({ length: n }, (_, i) => `a${i}: __typename`).join(" ")} }`;
    const tooMany = await post(platform.gateway.url, { query: aliases(201) }, apiKey);
    expect(tooMany.body).toMatchObject({ errors: [{ message: expect.stringContaining("201 aliases"), extensions: { code: "BAD_USER_INPUT" } }] });
    const fine = await post(platform.gateway.url, { query: aliases(200) }, apiKey);
    expect(fine.status).toBe(200);
  });

  it("answers GraphQL without an ETag: the body is not hashed for a revalidation no client makes", async () => {
    const { apiKey } = await createTenant(platform.gateway);
    const res = await post(platform.gateway.url, { query: "{ tenant { name } }" }, apiKey);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ data: { tenant: { name: expect.any(String) } } });
    expect(res.headers.get("etag")).toBeNull();
  });

  it("accepts batches of up to 20 operations", async () => {
    const { apiKey } = await createTenant(platform.gateway);
    const op = { query: "{ tenant { name } }" };
    const two = await post(platform.gateway.url, [op, op], apiKey);
    expect(two.status).toBe(200);
    expect(two.body).toHaveLength(2);
    const tooMany = await post(platform.gateway.url, Array.from({ length: 21 }, () => op), apiKey);
    expect(tooMany.status).toBe(400);
    expect(tooMany.body).toMatchObject({ errors: [{ extensions: { code: "BAD_USER_INPUT" } }] });
  });

  it("allows introspection with a valid credential only, and serves the committed SDL", async () => {
    const { apiKey } = await createTenant(platform.gateway);
    const query = getIntrospectionQuery({ descriptions: true, specifiedByUrl: true });
    expect(codeOf(await gql(platform.gateway.url, query))).toBe("UNAUTHENTICATED");
    expect(codeOf(await gql(platform.gateway.url, `{ __type(name: "Task") { name } }`))).toBe("UNAUTHENTICATED");
    const res = await gql<IntrospectionQuery>(platform.gateway.url, query, {}, apiKey);
    expect(res.errors).toBeUndefined();
    const served = `${printSchema(lexicographicSortSchema(buildClientSchema(res.data as IntrospectionQuery)))}\n`;
    expect(served).toBe(await readFile(path.join(root, "apps/gateway/schema.graphql"), "utf8"));

    const closed = await platform.startAnother({ env: { INTROSPECTION: "0" } });
    expect(codeOf(await gql(closed.url, query, {}, apiKey))).toBe("BAD_USER_INPUT");
  });

  it("hides field suggestions when NODE_ENV=production", async () => {
    const { apiKey } = await createTenant(platform.gateway);
    const dev = await gql(platform.gateway.url, `{ tenant { nam } }`, {}, apiKey);
    expect(dev.errors?.[0]?.message).toContain("Did you mean");
    const previous = process.env.NODE_ENV;
    process.env.NODE_ENV = "production";
    let prod: StartedGateway;
    try {
      prod = await platform.startAnother();
    } finally {
      process.env.NODE_ENV = previous;
    }
    const res = await gql(prod.url, `{ tenant { nam } }`, {}, apiKey);
    expect(codeOf(res)).toBe("BAD_USER_INPUT");
    expect(res.errors?.[0]?.message).not.toContain("Did you mean");
  });
});
