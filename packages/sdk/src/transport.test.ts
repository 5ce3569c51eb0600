import diagnostics from "node:diagnostics_channel";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { TasklaneClient } from "./client.js";
import { TasklaneError } from "./errors.js";
import { parseRetryAfter, retryDelayMs, DEFAULT_RETRY } from "./retry.js";
import { gqlError, ok, startFakeGateway, type FakeGateway, type FakeResponder } from "./test-support/fake-gateway.js";

const TASK = {
  id: "task_1",
  type: "t",
  queue: "default",
  payload: null,
  status: "QUEUED",
  priority: "NORMAL",
  runAt: "2030-01-01T00:00:00.000Z",
  createdAt: "2030-01-01T00:00:00.000Z",
  startedAt: null,
  completedAt: null,
  attempts: 0,
  maxAttempts: 3,
  timeoutSeconds: 300,
  result: null,
  lastError: null,
  idempotencyKey: null,
  orderingKey: null,
  workflowId: null,
  scheduleId: null,
  cancelRequested: false,
};

let gateway: FakeGateway | undefined;
afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
});

async function clientFor(responder: FakeResponder, options: Partial<ConstructorParameters<typeof TasklaneClient>[0]> = {}) {
  gateway = await startFakeGateway(responder);
  return { client: new TasklaneClient({ url: gateway.url, apiKey: "tl_key", retry: { baseDelayMs: 1 }, ...options }), gateway };
}

/** Answers with `replies` in order, then with the last one forever. */
function sequence(...replies: ReturnType<FakeResponder>[]): FakeResponder {
  let i = 0;
  return () => replies[Math.min(i++, replies.length - 1)] ?? ok({});
}

async function rejection(promise: Promise<unknown>): Promise<TasklaneError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof TasklaneError)) throw new Error(`expected a TasklaneError, got ${String(error)}`);
  return error;
}

describe("transport: requests", () => {
  it("POSTs JSON with the bearer key and a request id, and returns the operation's data", async () => {
    const { client, gateway } = await clientFor(() => ok({ task: { ...TASK, attemptHistory: [] } }));
    const task = await client.tasks.get("task_1");
    expect(task?.id).toBe("task_1");
    const [req] = gateway.requests;
    expect(req?.headers.authorization).toBe("Bearer tl_key");
    expect(req?.headers["content-type"]).toBe("application/json");
    expect(req?.headers["x-request-id"]).toMatch(/^tl-[0-9a-f-]{36}$/);
    expect(req?.variables).toEqual({ id: "task_1" });
    expect(req?.query).toContain("attemptHistory");
  });

  it("posts to the URL's path and query string as given, also when two clients alternate", async () => {
    const { client, gateway } = await clientFor(() => ok({ task: { ...TASK, attemptHistory: [] } }));
    const other = new TasklaneClient({ url: `${gateway.url}?region=eu&v=2`, apiKey: "tl_key", retry: { baseDelayMs: 1 } });
    await client.tasks.get("task_1");
    await other.tasks.get("task_1");
    await client.tasks.get("task_1");
    expect(gateway.requests.map((r) => r.path)).toEqual(["/graphql", "/graphql?region=eu&v=2", "/graphql"]);
  });

  it("sends DateTime inputs as ISO strings", async () => {
    const { client, gateway } = await clientFor(() => ok({ submitTask: TASK }));
    const runAt = new Date(Date.now() + 60_000);
    await client.tasks.submit({ type: "t", runAt });
    expect(gateway.requests[0]?.variables).toEqual({ input: { type: "t", runAt: runAt.toISOString() } });
  });

  it("refuses invalid submit input locally with BAD_USER_INPUT and fieldErrors, without a request", async () => {
    const { client, gateway } = await clientFor(() => ok({ submitTask: TASK }));
    const error = await rejection(client.tasks.submit({ type: " ", maxAttempts: 0 }));
    expect(error.code).toBe("BAD_USER_INPUT");
    expect(error.fieldErrors.map((f) => f.path).sort()).toEqual(["maxAttempts", "type"]);
    expect(error.cause).toBeInstanceOf(Error);
    expect(gateway.requests).toHaveLength(0);
  });
});

describe("transport: error mapping", () => {
  it("maps errors[0].extensions.code to a TasklaneError with message, requestId, extensions and operation", async () => {
    const { client, gateway } = await clientFor(() => ({
      ...gqlError("BAD_USER_INPUT", "Invalid input.type: must not be blank", { fieldErrors: [{ path: "input.type", message: "must not be blank" }] }),
      headers: { "x-request-id": "req-from-header" },
    }));
    const error = await rejection(client.tasks.cancel("task_1"));
    expect(error).toBeInstanceOf(TasklaneError);
    expect(error).toMatchObject({ code: "BAD_USER_INPUT", message: "Invalid input.type: must not be blank", requestId: "req-from-header", operation: "cancelTask", httpStatus: 200 });
    expect(error.fieldErrors).toEqual([{ path: "input.type", message: "must not be blank" }]);
    expect(gateway.requests).toHaveLength(1);
  });

  it.each(["UNAUTHENTICATED", "FORBIDDEN", "NOT_FOUND", "CONFLICT", "QUOTA_EXCEEDED"])("%s is final: never retried", async (code) => {
    const { client, gateway } = await clientFor(() => gqlError(code, "no"));
    expect((await rejection(client.queues.list())).code).toBe(code);
    expect(gateway.requests).toHaveLength(1);
  });

  it("takes requestId from extensions (INTERNAL_SERVER_ERROR) and falls back to the id it sent", async () => {
    const { client } = await clientFor(() => gqlError("INTERNAL_SERVER_ERROR", "Internal server error", { requestId: "req-ext" }), { retry: false });
    expect((await rejection(client.queues.list())).requestId).toBe("req-ext");
    await gateway?.close();
    const second = await clientFor(() => gqlError("CONFLICT", "stale"));
    const error = await rejection(second.client.queues.list());
    expect(error.requestId).toBe(second.gateway.requests[0]?.headers["x-request-id"]);
  });

  it("a non-GraphQL 200 body is BAD_RESPONSE; an unknown code is INTERNAL_SERVER_ERROR", async () => {
    const { client } = await clientFor(sequence({ raw: "<html>hello</html>" }, gqlError("SOMETHING_NEW", "?")), { retry: false });
    expect((await rejection(client.queues.list())).code).toBe("BAD_RESPONSE");
    const error = await rejection(client.queues.list());
    expect(error.code).toBe("INTERNAL_SERVER_ERROR");
    expect(error.extensions.code).toBe("SOMETHING_NEW");
  });

  it("a JSON value that cannot be serialised is BAD_USER_INPUT before sending", async () => {
    const { client, gateway } = await clientFor(() => ok({}));
    const error = await rejection(client.leases.complete("task_1", "lt_1", { n: 1n }));
    expect(error.code).toBe("BAD_USER_INPUT");
    expect(gateway.requests).toHaveLength(0);
  });
});

describe("transport: retry policy", () => {
  it("retries RATE_LIMITED after extensions.retryAfterSeconds, even for a mutation without idempotencyKey (refused = nothing ran)", async () => {
    const { client, gateway } = await clientFor(sequence(gqlError("RATE_LIMITED", "slow down", { retryAfterSeconds: 0.05 }, 429), ok({ submitTask: TASK })));
    const started = Date.now();
    const task = await client.tasks.submit({ type: "t" });
    expect(task.id).toBe("task_1");
    expect(gateway.calls("SubmitTask")).toHaveLength(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
  });

  it("honours the Retry-After header of a bare 429 / 503 with OVERLOADED", async () => {
    const { client, gateway } = await clientFor(
      sequence({ status: 429, raw: "", headers: { "retry-after": "0" } }, gqlError("OVERLOADED", "shedding", { retryAfterSeconds: 0 }, 503), ok({ queues: [] })),
    );
    expect(await client.queues.list()).toEqual([]);
    expect(gateway.requests).toHaveLength(3);
  });

  it("gives up after `attempts` and throws the last error with retryAfterSeconds", async () => {
    const { client, gateway } = await clientFor(() => gqlError("RATE_LIMITED", "slow down", { retryAfterSeconds: 0.01 }, 429));
    const error = await rejection(client.queues.list());
    expect(error).toMatchObject({ code: "RATE_LIMITED", retryAfterSeconds: 0.01, httpStatus: 429 });
    expect(gateway.requests).toHaveLength(DEFAULT_RETRY.attempts);
  });

  it("does not wait out a Retry-After longer than maxDelayMs: the caller gets retryAfterSeconds", async () => {
    const { client, gateway } = await clientFor(() => gqlError("RATE_LIMITED", "slow down", { retryAfterSeconds: 60 }, 429), { retry: { maxDelayMs: 1000 } });
    const error = await rejection(client.queues.list());
    expect(error.retryAfterSeconds).toBe(60);
    expect(gateway.requests).toHaveLength(1);
  });

  it("retries a 5xx for queries and keyed submissions, but not for a submitTask without idempotencyKey", async () => {
    const bad = { status: 502, raw: "bad gateway" };
    const first = await clientFor(sequence(bad, ok({ queues: [] })));
    expect(await first.client.queues.list()).toEqual([]);
    expect(first.gateway.requests).toHaveLength(2);
    await first.gateway.close();

    const second = await clientFor(sequence(bad, ok({ submitTask: TASK })));
    const error = await rejection(second.client.tasks.submit({ type: "t" }));
    expect(error).toMatchObject({ code: "INTERNAL_SERVER_ERROR", httpStatus: 502 });
    expect(second.gateway.requests).toHaveLength(1);
    await second.gateway.close();

    const third = await clientFor(sequence(bad, ok({ submitTask: TASK })));
    await third.client.tasks.submit({ type: "t", idempotencyKey: "order-42" });
    expect(third.gateway.requests).toHaveLength(2);
  });

  it("submitMany is retried after an ambiguous failure only when every input has an idempotencyKey", async () => {
    const flaky = () => sequence(gqlError("INTERNAL_SERVER_ERROR", "Internal server error"), ok({ submitTasks: [TASK, TASK] }));
    const partial = await clientFor(flaky());
    await rejection(partial.client.tasks.submitMany([{ type: "t", idempotencyKey: "a" }, { type: "t" }]));
    expect(partial.gateway.requests).toHaveLength(1);
    await partial.gateway.close();
    const keyed = await clientFor(flaky());
    expect(await keyed.client.tasks.submitMany([{ type: "t", idempotencyKey: "a" }, { type: "t", idempotencyKey: "b" }])).toHaveLength(2);
    expect(keyed.gateway.requests).toHaveLength(2);
  });

  it("a reset connection is NETWORK_ERROR: retried for heartbeat, not for leaseTasks", async () => {
    const first = await clientFor(sequence({ destroy: true }, ok({ heartbeat: { leaseExpiresAt: "2030-01-01T00:00:00.000Z", cancelRequested: false } })));
    expect(await first.client.leases.heartbeat("task_1", "lt_1", 30)).toMatchObject({ cancelRequested: false });
    expect(first.gateway.requests).toHaveLength(2);
    await first.gateway.close();

    const second = await clientFor(() => ({ destroy: true }));
    const error = await rejection(second.client.leases.lease({ queue: "default", workerId: "w" }));
    expect(error.code).toBe("NETWORK_ERROR");
    expect(second.gateway.requests).toHaveLength(1);
  });

  it("connection refused proves nothing was sent, so even a non-idempotent mutation is retried", async () => {
    const port = await freePort();
    let calls = 0;
    const client = new TasklaneClient({
      url: `http://127.0.0.1:${port}/graphql`,
      apiKey: "k",
      retry: { baseDelayMs: 1 },
      fetch: (input, init) => {
        calls++;
        return fetch(input, init);
      },
    });
    const error = await rejection(client.tasks.submit({ type: "t" }));
    expect(error.code).toBe("NETWORK_ERROR");
    expect(error.cause).toBeInstanceOf(Error);
    expect(calls).toBe(3);
    // No server saw the request: no id to quote to an operator.
    expect(error.requestId).toBeUndefined();
  });

  it("through undici (no fetch given), a refused connection is recognised and retried the same way", async () => {
    const port = await freePort();
    let connectErrors = 0;
    const onConnectError = () => connectErrors++;
    // undici reports each failed connect on this channel: the attempts, counted without a fetch hook.
    diagnostics.subscribe("undici:client:connectError", onConnectError);
    try {
      const client = new TasklaneClient({ url: `http://127.0.0.1:${port}/graphql`, apiKey: "k", retry: { baseDelayMs: 1 } });
      const error = await rejection(client.tasks.submit({ type: "t" }));
      expect(error.code).toBe("NETWORK_ERROR");
      expect(connectErrors).toBe(3);
    } finally {
      diagnostics.unsubscribe("undici:client:connectError", onConnectError);
    }
  });

  it("a NETWORK_ERROR's message shows the URL without credentials written into it", async () => {
    const port = await freePort();
    const client = new TasklaneClient({ url: `http://ops:s3cret-pw@127.0.0.1:${port}/graphql`, apiKey: "k", retry: { baseDelayMs: 1 } });
    const error = await rejection(client.queues.list());
    expect(error.code).toBe("NETWORK_ERROR");
    expect(error.message).toContain(`request to http://***@127.0.0.1:${port}/graphql failed`);
    expect(error.message).not.toContain("s3cret-pw");
  });

  it("a slow answer is TIMEOUT: retried for queries, not for a plain submit", async () => {
    const slow = () => ({ ...ok({ queues: [], submitTask: TASK }), delayMs: 300 });
    const first = await clientFor(slow, { timeoutMs: 50 });
    const timedOut = await rejection(first.client.queues.list());
    expect(timedOut.code).toBe("TIMEOUT");
    // The gateway had the request: its id is the one to quote.
    expect(timedOut.requestId).toMatch(/^tl-[0-9a-f-]{36}$/);
    expect(first.gateway.requests).toHaveLength(3);
    await first.gateway.close();
    const second = await clientFor(slow, { timeoutMs: 50 });
    expect((await rejection(second.client.tasks.submit({ type: "t" }))).code).toBe("TIMEOUT");
    expect(second.gateway.requests).toHaveLength(1);
  });

  it("waitFor ends at its timeoutMs even while the gateway does not answer, retries included", async () => {
    // Each read alone may take the client's 2 s and be tried three times; waitFor's 300 ms bound them all.
    const { client } = await clientFor(() => ({ ...ok({ task: { ...TASK, attemptHistory: [] } }), delayMs: 5_000 }), { timeoutMs: 2_000 });
    const started = Date.now();
    const error = await rejection(client.tasks.waitFor("task_1", { timeoutMs: 300 }));
    expect(error.code).toBe("TIMEOUT");
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it("an invalid Date in a task filter is BAD_USER_INPUT naming the field, without a request", async () => {
    const { client, gateway } = await clientFor(() => ok({}));
    const error = await rejection(client.tasks.list({ createdBefore: new Date(Number.NaN) }));
    expect(error.code).toBe("BAD_USER_INPUT");
    expect(error.message).toContain("createdBefore");
    expect(gateway.requests).toHaveLength(0);
  });

  it("the caller's AbortSignal ends the call with ABORTED and no retry", async () => {
    const { client, gateway } = await clientFor(() => ({ ...ok({ queues: [] }), delayMs: 300 }));
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error("user gave up")), 30);
    const error = await rejection(client.queues.list({ signal: controller.signal }));
    expect(error.code).toBe("ABORTED");
    expect(error.cause).toEqual(new Error("user gave up"));
    expect(gateway.requests).toHaveLength(1);
  });

  it("retry: false makes one attempt", async () => {
    const { client, gateway } = await clientFor(() => gqlError("OVERLOADED", "busy", { retryAfterSeconds: 0 }, 503), { retry: false });
    expect((await rejection(client.queues.list())).code).toBe("OVERLOADED");
    expect(gateway.requests).toHaveLength(1);
  });
});

describe("retry maths", () => {
  it("uses Retry-After when given, else doubling steps with equal jitter, capped", () => {
    const policy = { attempts: 5, baseDelayMs: 100, maxDelayMs: 1000 };
    expect(retryDelayMs(1, 0.5, policy)).toBe(500);
    expect(retryDelayMs(1, 2, policy)).toBeNull();
    expect(retryDelayMs(1, undefined, policy, () => 0)).toBe(50);
    expect(retryDelayMs(3, undefined, policy, () => 1)).toBe(400);
    expect(retryDelayMs(10, undefined, policy, () => 1)).toBe(1000);
  });

  it("parses Retry-After as seconds or an HTTP date", () => {
    expect(parseRetryAfter("3")).toBe(3);
    expect(parseRetryAfter(null)).toBeUndefined();
    expect(parseRetryAfter("soon")).toBeUndefined();
    const now = Date.parse("2030-01-01T00:00:00Z");
    expect(parseRetryAfter("Tue, 01 Jan 2030 00:00:05 GMT", now)).toBe(5);
  });
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
