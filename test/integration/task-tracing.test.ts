import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApp, waitFor, type AppProcess } from "../helpers/app-process.js";
import { freePort } from "../helpers/free-port.js";
import { startReceiver, type HttpReceiver, type ReceivedRequest } from "../helpers/http-receiver.js";
import { createTestDatabase, uniqueRedisPrefix, type TestDatabase } from "../helpers/test-database.js";

/**
 * One trace per task, across real processes: gateway, scheduler, worker and
 * notifier export spans (OTLP/HTTP JSON) to a collector stand-in on
 * 127.0.0.1; the PUSH endpoint and the webhook receive the trace in a
 * `traceparent` header. Processes are stopped (SIGTERM flushes their span
 * buffers) before the spans are read, so nothing depends on export timing.
 * The second half runs with tracing switched off and checks that nothing is
 * exported while a submitter's own traceparent still reaches the endpoint.
 * The worker's JSON logs are checked for task fields and for secrets.
 */
const REDIS_URL = "redis://127.0.0.1:6379/0";
const ADMIN_TOKEN = `admin-${"t".repeat(24)}`;
const CLIENT_TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_TRACEPARENT = `00-${CLIENT_TRACE_ID}-00f067aa0ba902b7-01`;

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  service: string;
  attributes: Record<string, unknown>;
}

/** OTLP/JSON ids are hex; accept base64 too, whichever the exporter chose. */
function hexId(id: string, bytes: number): string {
  return id.length === bytes * 2 && /^[0-9a-f]+$/i.test(id) ? id.toLowerCase() : Buffer.from(id, "base64").toString("hex");
}

function spansOf(requests: ReceivedRequest[]): OtlpSpan[] {
  type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
  type KeyValue = { key: string; value: AnyValue };
  const value = (v: AnyValue) => v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.boolValue ?? v.doubleValue));
  const out: OtlpSpan[] = [];
  for (const req of requests.filter((r) => r.path === "/v1/traces")) {
    const body = req.json as { resourceSpans?: { resource?: { attributes?: KeyValue[] }; scopeSpans?: { spans?: Record<string, unknown>[] }[] }[] };
    for (const rs of body.resourceSpans ?? []) {
      const service = String(rs.resource?.attributes?.find((a) => a.key === "service.name")?.value.stringValue);
      for (const ss of rs.scopeSpans ?? []) {
        for (const s of ss.spans ?? []) {
          const attrs = Object.fromEntries(((s.attributes as KeyValue[] | undefined) ?? []).map((a) => [a.key, value(a.value)]));
          out.push({
            traceId: hexId(String(s.traceId), 16),
            spanId: hexId(String(s.spanId), 8),
            ...(s.parentSpanId ? { parentSpanId: hexId(String(s.parentSpanId), 8) } : {}),
            name: String(s.name),
            service,
            attributes: attrs,
          });
        }
      }
    }
  }
  return out;
}

const traceIdOf = (traceparent: unknown) => (typeof traceparent === "string" ? traceparent.split("-")[1] : undefined);
const parentIdOf = (traceparent: unknown) => (typeof traceparent === "string" ? traceparent.split("-")[2] : undefined);

let tdb: TestDatabase;
let collector: HttpReceiver;
let endpoint: HttpReceiver;
let apps: AppProcess[] = [];
let gatewayUrl: string;
let hangClosed = false;

async function call<T>(query: string, variables: Record<string, unknown>, token: string, headers: Record<string, string> = {}): Promise<T> {
  const res = await fetch(gatewayUrl, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}`, ...headers },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await res.json()) as { data?: T; errors?: unknown[] };
  if (body.errors) throw new Error(`GraphQL errors: ${JSON.stringify(body.errors)}`);
  return body.data as T;
}

async function startPlatform(names: ("gateway" | "scheduler" | "worker" | "notifier")[], env: Record<string, string>): Promise<void> {
  const port = await freePort();
  gatewayUrl = `http://127.0.0.1:${port}/graphql`;
  apps = names.map((name) => startApp(name, { ...env, PORT: String(port), HOST: "127.0.0.1" }));
  await waitFor("gateway health", async () => (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null))?.ok === true, 60_000, 100);
}

/** SIGTERM every app; each exports its buffered spans before it exits. */
async function stopPlatform(): Promise<Map<string, string>> {
  const outputs = new Map(apps.map((a) => [a.name, ""]));
  await Promise.all(apps.map(async (a) => {
    expect(await a.stop()).toBe(0);
    outputs.set(a.name, a.output());
  }));
  apps = [];
  return outputs;
}

const SUBMIT = `mutation ($input: SubmitTaskInput!) { submitTask(input: $input) { id } }`;
const TASK = `query ($id: ID!) { task(id: $id) { status attempts } }`;

async function settle(id: string, apiKey: string): Promise<{ status: string; attempts: number }> {
  return waitFor(`task ${id} to succeed`, async () => {
    const { task } = await call<{ task: { status: string; attempts: number } }>(TASK, { id }, apiKey);
    return task.status === "SUCCEEDED" ? task : null;
  }, 60_000, 100);
}

beforeAll(async () => {
  tdb = await createTestDatabase("tracing");
  collector = await startReceiver((_req, res) => {
    res.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
  // The tenant's PUSH endpoint: the first attempt of a "flaky" task fails (retryable), a "hang" task
  // is never answered (until it is cancelled), every other one succeeds.
  endpoint = await startReceiver((req, res) => {
    const body = req.json as { type?: string; attempt?: number } | null;
    if (req.path === "/push" && body?.type === "hang") {
      res.on("close", () => (hangClosed = true));
      return;
    }
    const fail = req.path === "/push" && body?.type === "flaky" && body.attempt === 1;
    res.writeHead(fail ? 503 : 200, { "content-type": "application/json" }).end(fail ? "try later" : '{"ok":true}');
  });
});

afterAll(async () => {
  await Promise.all(apps.map((a) => a.stop()));
  await collector?.close();
  await endpoint?.close();
  await tdb?.drop();
});

describe("tracing on", () => {
  let apiKey = "";
  let signingSecret = "";
  let webhookSecret = "";
  let taskId = "";
  let joinedTaskId = "";
  let workflowTaskId = "";
  let pullTaskId = "";
  let settledPullTaskId = "";
  let cancelledTaskId = "";
  let leasedTraceParent: string | null = null;
  let outputs = new Map<string, string>();

  beforeAll(async () => {
    await startPlatform(["gateway", "scheduler", "worker", "notifier"], {
      DATABASE_URL: tdb.url,
      REDIS_URL,
      REDIS_KEY_PREFIX: uniqueRedisPrefix("trace"),
      ADMIN_TOKEN,
      ALLOW_PRIVATE_TARGETS: "1",
      WEBHOOK_RETRY_SCHEDULE: "1,1,1",
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_BSP_SCHEDULE_DELAY: "100",
      LOG_LEVEL: "debug",
      WORKER_ID: "trace-worker-1",
    });
    const created = await call<{ createTenant: { apiKey: string; signingSecret: string } }>(
      `mutation { createTenant(input: {name: "traced"}) { apiKey signingSecret } }`, {}, ADMIN_TOKEN);
    ({ apiKey, signingSecret } = created.createTenant);
    await call(`mutation ($url: String!) { upsertQueue(input: {name: "push", mode: PUSH, endpointUrl: $url}) { name } }`, { url: `${endpoint.url}/push` }, apiKey);
    const hook = await call<{ createWebhook: { secret: string } }>(
      `mutation ($url: String!) { createWebhook(input: {url: $url, events: ["task.succeeded"]}) { secret } }`, { url: `${endpoint.url}/webhook` }, apiKey);
    webhookSecret = hook.createWebhook.secret;
    const input = { type: "flaky", queue: "push", payload: { n: 1 }, maxAttempts: 3, backoff: { strategy: "FIXED", delaySeconds: 0.2 } };
    taskId = (await call<{ submitTask: { id: string } }>(SUBMIT, { input }, apiKey)).submitTask.id;
    joinedTaskId = (await call<{ submitTask: { id: string } }>(SUBMIT, { input: { type: "plain", queue: "push" } }, apiKey, { traceparent: CLIENT_TRACEPARENT })).submitTask.id;
    expect((await settle(taskId, apiKey)).attempts).toBe(2);
    await settle(joinedTaskId, apiKey);
    const wf = await call<{ submitWorkflow: { tasks: { task: { id: string } }[] } }>(
      `mutation { submitWorkflow(input: {name: "traced-wf", tasks: [{key: "only", type: "wf", queue: "push"}]}) { tasks { task { id } } } }`, {}, apiKey);
    workflowTaskId = wf.submitWorkflow.tasks[0]!.task.id;
    await settle(workflowTaskId, apiKey);
    pullTaskId = (await call<{ submitTask: { id: string } }>(SUBMIT, { input: { type: "pulled", queue: "default" } }, apiKey)).submitTask.id;
    const { leaseTasks } = await call<{ leaseTasks: { leaseToken: string; task: { id: string; traceParent: string | null } }[] }>(
      `mutation { leaseTasks(queue: "default", workerId: "pull-w") { leaseToken task { id traceParent } } }`, {}, apiKey);
    expect(leaseTasks[0]?.task.id).toBe(pullTaskId);
    leasedTraceParent = leaseTasks[0]!.task.traceParent;
    await call(`mutation ($id: ID!, $t: String!) { completeTask(taskId: $id, leaseToken: $t) { id } }`, { id: pullTaskId, t: leaseTasks[0]!.leaseToken }, apiKey);
    // The SDK Worker's way: completeTasks asking for no task; the outcome's span still names the task's state.
    settledPullTaskId = (await call<{ submitTask: { id: string } }>(SUBMIT, { input: { type: "settled", queue: "default" } }, apiKey)).submitTask.id;
    const again = await call<{ leaseTasks: { leaseToken: string; task: { id: string } }[] }>(
      `mutation { leaseTasks(queue: "default", workerId: "pull-w") { leaseToken task { id } } }`, {}, apiKey);
    expect(again.leaseTasks[0]?.task.id).toBe(settledPullTaskId);
    await call(`mutation ($c: [TaskCompletionInput!]!) { completeTasks(completions: $c) { taskId accepted } }`,
      { c: [{ taskId: settledPullTaskId, leaseToken: again.leaseTasks[0]!.leaseToken, result: { ok: true } }] }, apiKey);
    // A PUSH attempt cancelled mid-request: the worker aborts it when the cancellation reaches it.
    cancelledTaskId = (await call<{ submitTask: { id: string } }>(SUBMIT, { input: { type: "hang", queue: "push", timeoutSeconds: 120 } }, apiKey)).submitTask.id;
    await waitFor("the hanging request", () => endpoint.requests.some((r) => r.path === "/push" && (r.json as { taskId?: string }).taskId === cancelledTaskId), 30_000, 50);
    await call(`mutation ($id: ID!) { cancelTask(id: $id) { id } }`, { id: cancelledTaskId }, apiKey);
    await waitFor("the worker to abort the request", () => hangClosed, 30_000, 50);
    await waitFor("both webhooks delivered", () => endpoint.requests.filter((r) => r.path === "/webhook").length >= 2, 30_000, 100);
    outputs = await stopPlatform();
  });

  it("records submit, dispatch, each attempt and the webhook in one trace per task", () => {
    const spans = spansOf(collector.requests);
    const submit = spans.find((s) => s.name === "task.submit" && s.attributes["tasklane.task_id"] === taskId);
    expect(submit?.service).toBe("tasklane-gateway");
    const traceId = submit!.traceId;
    const inTrace = spans.filter((s) => s.traceId === traceId);
    const names = inTrace.map((s) => `${s.service}/${s.name}`);
    expect(names).toContain("tasklane-gateway/task.dispatch");
    // The retry after the failed first attempt is dispatched by the worker that recorded the failure.
    expect(names).toContain("tasklane-worker/task.dispatch");
    expect(names).toContain("tasklane-notifier/webhook.deliver");
    const attempts = inTrace.filter((s) => s.name === "task.attempt");
    expect(attempts.map((s) => s.attributes["tasklane.attempt"]).sort()).toEqual([1, 2]);
    for (const a of attempts) {
      expect(a.service).toBe("tasklane-worker");
      expect(a.parentSpanId).toBe(submit!.spanId);
      expect(a.attributes).toMatchObject({ "tasklane.task_id": taskId, "tasklane.worker_id": "trace-worker-1" });
    }
    // Nothing of this task leaked into another trace.
    expect(spans.filter((s) => s.attributes["tasklane.task_id"] === taskId && s.traceId !== traceId)).toEqual([]);
  });

  it("names each attempt's outcome as the worker's outcome metric does, a cancelled one `cancelled`", () => {
    const spans = spansOf(collector.requests);
    const outcomes = (id: string) => spans.filter((s) => s.name === "task.attempt" && s.attributes["tasklane.task_id"] === id)
      .sort((a, b) => Number(a.attributes["tasklane.attempt"]) - Number(b.attributes["tasklane.attempt"]))
      .map((s) => s.attributes["tasklane.outcome"]);
    // tasklane_task_outcomes_total's labels: succeeded, failed, timed_out, dead, stale, cancelled, handed_back.
    expect(outcomes(taskId)).toEqual(["failed", "succeeded"]);
    expect(outcomes(cancelledTaskId)).toEqual(["cancelled"]);
  });

  it("gives webhook.deliver the delivery's attempt as tasklane.delivery.attempt; tasklane.attempt stays the task's", () => {
    const spans = spansOf(collector.requests);
    // The task succeeded on its second attempt; its webhook went out on the delivery's first.
    const deliver = spans.find((s) => s.name === "webhook.deliver" && s.attributes["tasklane.task_id"] === taskId);
    expect(deliver?.attributes["tasklane.delivery.attempt"]).toBe(1);
    expect(deliver?.attributes).not.toHaveProperty("tasklane.attempt");
  });

  it("sends traceparent to the PUSH endpoint and the webhook, naming the attempt and delivery spans", () => {
    const spans = spansOf(collector.requests);
    const traceId = spans.find((s) => s.name === "task.submit" && s.attributes["tasklane.task_id"] === taskId)!.traceId;
    const pushes = endpoint.requests.filter((r) => r.path === "/push" && (r.json as { taskId?: string }).taskId === taskId);
    expect(pushes).toHaveLength(2);
    const attemptSpanIds = new Set(spans.filter((s) => s.name === "task.attempt" && s.traceId === traceId).map((s) => s.spanId));
    for (const push of pushes) {
      expect(traceIdOf(push.headers.traceparent)).toBe(traceId);
      expect(attemptSpanIds.has(parentIdOf(push.headers.traceparent) ?? "")).toBe(true);
    }
    const hook = endpoint.requests.find((r) => r.path === "/webhook" && JSON.stringify(r.json).includes(taskId));
    expect(traceIdOf(hook?.headers.traceparent)).toBe(traceId);
    const deliverIds = spans.filter((s) => s.name === "webhook.deliver" && s.traceId === traceId).map((s) => s.spanId);
    expect(deliverIds).toContain(parentIdOf(hook?.headers.traceparent));
  });

  it("continues the submitter's trace when the submit request carries a traceparent", () => {
    const spans = spansOf(collector.requests);
    const submit = spans.find((s) => s.name === "task.submit" && s.attributes["tasklane.task_id"] === joinedTaskId);
    expect(submit?.traceId).toBe(CLIENT_TRACE_ID);
    expect(submit?.parentSpanId).toBe("00f067aa0ba902b7");
    const push = endpoint.requests.find((r) => r.path === "/push" && (r.json as { taskId?: string }).taskId === joinedTaskId);
    expect(traceIdOf(push?.headers.traceparent)).toBe(CLIENT_TRACE_ID);
  });

  it("gives a workflow's task its own trace from submitWorkflow to the endpoint", () => {
    const spans = spansOf(collector.requests);
    const attempt = spans.find((s) => s.name === "task.attempt" && s.attributes["tasklane.task_id"] === workflowTaskId);
    const root = spans.find((s) => s.spanId === attempt?.parentSpanId);
    expect(root).toMatchObject({ name: "task.submit", service: "tasklane-gateway", traceId: attempt?.traceId });
    const push = endpoint.requests.find((r) => r.path === "/push" && (r.json as { taskId?: string }).taskId === workflowTaskId);
    expect(traceIdOf(push?.headers.traceparent)).toBe(attempt?.traceId);
  });

  it("records a PULL task's lease and outcome in its trace", () => {
    const spans = spansOf(collector.requests);
    const submit = spans.find((s) => s.name === "task.submit" && s.attributes["tasklane.task_id"] === pullTaskId)!;
    // (Its webhook delivery may be a child too, from the notifier.)
    const children = spans.filter((s) => s.parentSpanId === submit.spanId && s.traceId === submit.traceId && s.service === "tasklane-gateway");
    expect(children.map((s) => s.name).sort()).toEqual(["task.complete", "task.lease"]);
    // The lease hands the task's trace to the tenant's worker, so its own spans can join it.
    expect(leasedTraceParent).toBe(`00-${submit.traceId}-${submit.spanId}-01`);
    expect(children.find((s) => s.name === "task.lease")?.attributes).toMatchObject({ "tasklane.worker_id": "pull-w", "tasklane.attempt": 1 });
    expect(children.find((s) => s.name === "task.complete")?.attributes).toMatchObject({ "tasklane.outcome": "SUCCEEDED" });
  });

  it("records the outcome of a PULL task completed without reading it back (completeTasks without task)", () => {
    const spans = spansOf(collector.requests);
    const submit = spans.find((s) => s.name === "task.submit" && s.attributes["tasklane.task_id"] === settledPullTaskId)!;
    const complete = spans.find((s) => s.name === "task.complete" && s.parentSpanId === submit.spanId && s.traceId === submit.traceId);
    expect(complete?.attributes).toMatchObject({ "tasklane.task_id": settledPullTaskId, "tasklane.outcome": "SUCCEEDED", "tasklane.attempt": 1 });
  });

  it("logs each attempt as JSON with taskId, tenantId, attempt and workerId, and no secret", () => {
    const lines = (outputs.get("worker") ?? "").split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as Record<string, unknown>);
    const about = lines.filter((l) => l.taskId === taskId);
    expect(about.map((l) => l.msg)).toEqual(expect.arrayContaining(["attempt failed", "attempt succeeded"]));
    for (const line of about) {
      expect(line).toMatchObject({ taskId, workerId: "trace-worker-1", tenantId: expect.stringMatching(/^ten_/) });
      expect(typeof line.attempt).toBe("number");
    }
    const notifierLines = (outputs.get("notifier") ?? "").split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(notifierLines.find((l) => l.taskId === taskId && l.msg === "delivered")).toMatchObject({ tenantId: expect.stringMatching(/^ten_/), deliveryId: expect.any(String), attempt: 1 });
    for (const [name, text] of outputs) {
      for (const secret of [apiKey, signingSecret, webhookSecret, ADMIN_TOKEN]) {
        expect(text.includes(secret), `${name} logged a secret`).toBe(false);
      }
    }
  });
});

describe("tracing off", () => {
  it("exports nothing, and still hands a submitter's traceparent to the PUSH endpoint", async () => {
    collector.requests.length = 0;
    await startPlatform(["gateway", "worker"], {
      DATABASE_URL: tdb.url,
      REDIS_URL,
      REDIS_KEY_PREFIX: uniqueRedisPrefix("notrace"),
      ADMIN_TOKEN,
      ALLOW_PRIVATE_TARGETS: "1",
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_SDK_DISABLED: "true",
      OTEL_BSP_SCHEDULE_DELAY: "100",
    });
    const { createTenant } = await call<{ createTenant: { apiKey: string } }>(`mutation { createTenant(input: {name: "untraced"}) { apiKey } }`, {}, ADMIN_TOKEN);
    const key = createTenant.apiKey;
    await call(`mutation ($url: String!) { upsertQueue(input: {name: "push", mode: PUSH, endpointUrl: $url}) { name } }`, { url: `${endpoint.url}/push` }, key);
    const joined = (await call<{ submitTask: { id: string } }>(SUBMIT, { input: { type: "plain", queue: "push" } }, key, { traceparent: CLIENT_TRACEPARENT })).submitTask.id;
    const bare = (await call<{ submitTask: { id: string } }>(SUBMIT, { input: { type: "plain", queue: "push" } }, key)).submitTask.id;
    await settle(joined, key);
    await settle(bare, key);
    await stopPlatform();
    expect(collector.requests).toEqual([]);
    const pushOf = (id: string) => endpoint.requests.find((r) => r.path === "/push" && (r.json as { taskId?: string }).taskId === id);
    expect(pushOf(joined)?.headers.traceparent).toBe(CLIENT_TRACEPARENT);
    expect(pushOf(bare)?.headers.traceparent).toBeUndefined();
  });
});
