/**
 * @tasklane/sdk's client against the real gateway (in-process, real Postgres
 * and Redis): the typed resources return the contract's shapes, and gateway
 * errors arrive as TasklaneError with the contract's codes.
 */
import { TasklaneClient, isTasklaneError, type FetchLike } from "@tasklane/sdk";
import { describe, expect, it } from "vitest";
import { useGateway } from "../helpers/gateway-fixture.js";
import { createTenant } from "../helpers/platform.js";
import { sdkRejection as rejection } from "../helpers/sdk-calls.js";

describe("SDK client against the gateway", () => {
  const platform = useGateway();

  async function tenantClient(): Promise<TasklaneClient> {
    const { apiKey } = await createTenant(platform.gateway);
    return new TasklaneClient({ url: platform.gateway.url, apiKey });
  }

  it("submits, reads, lists and iterates tasks with the contract's shapes", async () => {
    const client = await tenantClient();
    const submitted = await client.tasks.submit({ type: "sdk.read", payload: { n: 1 }, priority: "HIGH", maxAttempts: 4, metadata: { from: "sdk" } });
    expect(submitted).toMatchObject({ type: "sdk.read", queue: "default", payload: { n: 1 }, status: "QUEUED", priority: "HIGH", maxAttempts: 4, attempts: 0, cancelRequested: false });
    expect(submitted.id).toMatch(/^task_/);
    expect(new Date(submitted.createdAt).toISOString()).toBe(submitted.createdAt);

    const got = await client.tasks.get(submitted.id);
    expect(got).toMatchObject({ id: submitted.id, attemptHistory: [] });
    expect(await client.tasks.get("task_0190a0a0a0a07000800000000000000a")).toBeNull();

    const batch = await client.tasks.submitMany([{ type: "sdk.batch", payload: 1 }, { type: "sdk.batch", payload: 2 }, { type: "sdk.batch", payload: 3 }]);
    expect(batch.map((t) => t.payload)).toEqual([1, 2, 3]);

    const page = await client.tasks.list({ type: "sdk.batch" }, { first: 2 });
    expect(page.totalCount).toBe(3);
    expect(page.nodes).toHaveLength(2);
    expect(page.pageInfo.hasNextPage).toBe(true);
    const all = [];
    for await (const task of client.tasks.iterate({ type: "sdk.batch" }, { pageSize: 2 })) all.push(task.id);
    expect(all.sort()).toEqual(batch.map((t) => t.id).sort());
  });

  it("submitManyIds answers the new tasks' ids in input order, and refuses a bad batch whole", async () => {
    const client = await tenantClient();
    const ids = await client.tasks.submitManyIds([{ type: "sdk.ids", payload: "a" }, { type: "sdk.ids", payload: "b" }, { type: "sdk.ids", payload: "c" }]);
    expect(ids).toHaveLength(3);
    const tasks = await Promise.all(ids.map((id) => client.tasks.get(id)));
    expect(tasks.map((t) => [t?.id, t?.payload, t?.status])).toEqual([
      [ids[0], "a", "QUEUED"],
      [ids[1], "b", "QUEUED"],
      [ids[2], "c", "QUEUED"],
    ]);
    const refused = await rejection(client.tasks.submitManyIds([{ type: "sdk.ids", payload: "d" }, { type: "sdk.ids", queue: "no-such-queue" }]));
    expect(refused.code).toBe("NOT_FOUND");
    expect((await client.tasks.list({ type: "sdk.ids" })).totalCount).toBe(3);
  });

  it("an idempotencyKey returns the first task instead of creating another", async () => {
    const client = await tenantClient();
    const first = await client.tasks.submit({ type: "sdk.once", idempotencyKey: "order-42" });
    const again = await client.tasks.submit({ type: "sdk.once", idempotencyKey: "order-42" });
    expect(again.id).toBe(first.id);
    expect((await client.tasks.list({ type: "sdk.once" })).totalCount).toBe(1);
  });

  it("cancels a queued task; cancelling it again is CONFLICT", async () => {
    const client = await tenantClient();
    const task = await client.tasks.submit({ type: "sdk.cancel", delaySeconds: 3600 });
    expect(task.status).toBe("SCHEDULED");
    expect((await client.tasks.cancel(task.id)).status).toBe("CANCELLED");
    const error = await rejection(client.tasks.cancel(task.id));
    expect(error.code).toBe("CONFLICT");
    expect(error.operation).toBe("cancelTask");
  });

  it("maps gateway refusals to typed errors", async () => {
    const client = await tenantClient();
    const missingQueue = await rejection(client.tasks.submit({ type: "sdk.nowhere", queue: "no-such-queue" }));
    expect(missingQueue.code).toBe("NOT_FOUND");
    expect(missingQueue.message).toBe('Queue "no-such-queue" not found');
    expect(missingQueue.requestId).toMatch(/^tl-/);

    // Refused before a round trip, naming the field, as the gateway requires an explicit offset
    // (JS would read it in this machine's zone); a Date that is no date likewise.
    const noOffset = await rejection(client.tasks.submit({ type: "sdk.when", runAt: "2030-01-01T00:00:00" }));
    expect(noOffset).toMatchObject({ code: "BAD_USER_INPUT", requestId: undefined });
    expect(noOffset.fieldErrors).toEqual([{ path: "runAt", message: "must be a Date or an ISO-8601 string with a time zone offset, e.g. 2030-01-01T00:00:00.000Z" }]);
    expect((await rejection(client.tasks.submitMany([{ type: "a" }, { type: "b", runAt: "tomorrow" }]))).fieldErrors).toEqual([{ path: "1.runAt", message: expect.stringContaining("offset") }]);
    expect((await rejection(client.tasks.list({ createdAfter: new Date("nope") }))).fieldErrors).toEqual([{ path: "filter.createdAfter", message: "is an invalid Date" }]);

    const anonymous = new TasklaneClient({ url: platform.gateway.url, apiKey: "tl_notakey0_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" });
    expect((await rejection(anonymous.tenant.get())).code).toBe("UNAUTHENTICATED");
    expect(isTasklaneError(await rejection(client.operator.createTenant({ name: "x" })), "FORBIDDEN")).toBe(true);
  });

  it("lists workflows newest first a page at a time, the last id as the cursor, and iterates them all", async () => {
    const client = await tenantClient();
    const names = ["w1", "w2", "w3", "w4", "w5"];
    for (const name of names) await client.workflows.submit({ name, tasks: [{ key: "only", type: "sdk.wf" }] });
    const first = await client.workflows.list({ first: 2 });
    expect(first.map((w) => w.name)).toEqual(["w5", "w4"]);
    const second = await client.workflows.list({ first: 2, after: first.at(-1)!.id });
    expect(second.map((w) => w.name)).toEqual(["w3", "w2"]);
    const all: string[] = [];
    for await (const w of client.workflows.iterate({ pageSize: 2 })) all.push(w.name);
    expect(all).toEqual([...names].reverse());
  });

  it("manages queues: upsert, get, list, pause, resume", async () => {
    const client = await tenantClient();
    const created = await client.queues.upsert({ name: "reports", mode: "PULL", concurrency: 3, rateLimit: { perSecond: 5 } });
    expect(created).toMatchObject({ name: "reports", mode: "PULL", endpointUrl: null, concurrency: 3, paused: false, rateLimit: { perSecond: 5 } });
    expect(created.stats).toMatchObject({ queued: 0, running: 0 });
    expect((await client.queues.pause("reports")).paused).toBe(true);
    expect((await client.queues.resume("reports")).paused).toBe(false);
    expect((await client.queues.list()).map((q) => q.name).sort()).toEqual(["default", "reports"]);
    expect(await client.queues.get("absent")).toBeNull();
    const local = await rejection(client.queues.upsert({ name: "hook", mode: "PUSH", endpointUrl: "not a url" }));
    expect(local.code).toBe("BAD_USER_INPUT");
  });

  it("manages webhooks: create, disable, re-enable, update, delete", async () => {
    const client = await tenantClient();
    // A literal public address: no DNS, and nothing is delivered in this test.
    const { webhook, secret } = await client.webhooks.create({ url: "https://93.184.216.34/hooks", events: ["task.dead"] });
    expect(webhook).toEqual({ id: webhook.id, url: "https://93.184.216.34/hooks", events: ["task.dead"], enabled: true, disabledReason: null, failureStreak: 0, previousSecretExpiresAt: null, createdAt: expect.any(String) });
    expect(await client.webhooks.update(webhook.id, { enabled: false })).toMatchObject({ enabled: false, disabledReason: "disabled by the tenant" });
    const enabled = await client.webhooks.update(webhook.id, { enabled: true, events: ["*"], url: null });
    expect(enabled).toEqual({ ...webhook, events: ["*"], enabled: true, disabledReason: null, failureStreak: 0 });
    expect(await client.webhooks.list()).toEqual([enabled]);
    expect(secret).toMatch(/^whsec_/);

    const refused = await rejection(client.webhooks.update(webhook.id, { events: [] }));
    expect(refused.code).toBe("BAD_USER_INPUT");
    expect(refused.fieldErrors.map((f) => f.path)).toEqual(["events"]);
    // No delivery yet (no notifier here): the calls reach the gateway and answer as the contract says.
    expect(await client.webhooks.deliveries({ webhookId: webhook.id, first: 5, status: "FAILED", before: null })).toEqual([]);
    expect(await client.webhooks.redeliverSince(webhook.id, new Date(Date.now() - 60_000))).toBe(0);
    expect((await rejection(client.webhooks.redeliver("dlv_0190a0a0a0a07000800000000000000a"))).code).toBe("NOT_FOUND");
    expect(await client.webhooks.delete(webhook.id)).toBe(true);
    expect((await rejection(client.webhooks.update(webhook.id, { enabled: true }))).code).toBe("NOT_FOUND");
  });

  it("cancel, discard and workflows.cancel whose answer was lost answer the cancelled task or workflow, not the repeat's CONFLICT", async () => {
    const { apiKey } = await createTenant(platform.gateway);
    // Loses the answer of each operation's first call, after the gateway has answered it: the transport repeats it.
    const lost = new Set<string>();
    const losing: FetchLike = async (input, init) => {
      const res = await fetch(input, init);
      const name = /^\s*mutation (CancelTask|DiscardTask|CancelWorkflow)\b/.exec((JSON.parse(String(init.body)) as { query: string }).query)?.[1];
      if (name === undefined || lost.has(name)) return res;
      lost.add(name);
      await res.text();
      throw new TypeError("fetch failed", { cause: Object.assign(new Error("socket hang up"), { code: "ECONNRESET" }) });
    };
    const client = new TasklaneClient({ url: platform.gateway.url, apiKey, fetch: losing });
    const queued = await client.tasks.submit({ type: "sdk.cancel" });
    expect(await client.tasks.cancel(queued.id)).toMatchObject({ id: queued.id, status: "CANCELLED" });
    const { id } = await client.tasks.submit({ type: "sdk.dies", maxAttempts: 1 });
    const [lease] = await client.leases.lease({ queue: "default", workerId: "sdk", max: 1, waitSeconds: 0 });
    await client.leases.fail(id, lease!.leaseToken, "no", false);
    expect(await client.tasks.discard(id)).toMatchObject({ id, status: "CANCELLED" });
    const workflow = await client.workflows.submit({ name: "cancelled", tasks: [{ key: "a", type: "sdk.wf" }] });
    expect(await client.workflows.cancel(workflow.id)).toMatchObject({ id: workflow.id, status: "CANCELLED" });
    expect([...lost].sort()).toEqual(["CancelTask", "CancelWorkflow", "DiscardTask"]);
    // A CONFLICT of its own stands: the task was cancelled before this call.
    expect((await rejection(client.tasks.cancel(queued.id))).code).toBe("CONFLICT");
  });

  it("discards a dead task out of the dead-letter queue; answers the contract's fields the types name", async () => {
    const client = await tenantClient();
    const { id } = await client.tasks.submit({ type: "sdk.dies", maxAttempts: 1 });
    const [lease] = await client.leases.lease({ queue: "default", workerId: "sdk", max: 1, waitSeconds: 0 });
    expect((await client.leases.fail(id, lease!.leaseToken, "no", false)).status).toBe("DEAD");
    expect((await client.tasks.deadLetters()).nodes.map((t) => t.id)).toEqual([id]);
    expect(await client.tasks.discard(id)).toMatchObject({ id, status: "CANCELLED" });
    expect((await client.tasks.deadLetters()).totalCount).toBe(0);
    expect((await rejection(client.tasks.discard(id))).code).toBe("CONFLICT");

    const workflow = await client.workflows.submit({ name: "counted", tasks: [{ key: "a", type: "sdk.wf" }, { key: "b", type: "sdk.wf", dependsOn: ["a"] }] });
    expect(workflow.taskCount).toBe(2);
    const [key] = await client.tenant.apiKeys();
    expect(key).toMatchObject({ expiresAt: null, revokedAt: null });
    // An existing PUSH queue is updated without repeating its endpoint.
    await client.queues.upsert({ name: "hooks", mode: "PUSH", endpointUrl: "https://93.184.216.34/tasks" });
    expect(await client.queues.upsert({ name: "hooks", mode: "PUSH", paused: true })).toMatchObject({ endpointUrl: "https://93.184.216.34/tasks", paused: true });
  });

  it("reads the caller's tenant; the operator creates tenants with the admin token", async () => {
    const operator = new TasklaneClient({ url: platform.gateway.url, apiKey: platform.gateway.adminToken });
    const created = await operator.operator.createTenant({ name: "Sdk Co", limits: { maxPendingTasks: 100 } });
    expect(created.apiKey).toMatch(/^tl_/);
    const client = new TasklaneClient({ url: platform.gateway.url, apiKey: created.apiKey });
    const tenant = await client.tenant.get();
    expect(tenant).toMatchObject({ id: created.tenant.id, name: "Sdk Co", limits: { maxPendingTasks: 100 }, usage: { pendingTasks: 0 } });
  });
});
