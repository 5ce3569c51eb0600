import { describe, expect, it } from "vitest";
import type { TaskRecord } from "../tasks/task-record.js";
import { planDeliveries, taskAtEvent, type NotifyEvent, type WebhookTarget } from "./plan-deliveries.js";

const at = new Date("2026-01-02T03:04:05.678Z");

function task(overrides: Partial<TaskRecord> = {}): TaskRecord {
  return {
    id: "task_1", tenantId: "ten_1", queueId: "que_1", queueName: "default", type: "email.send", payload: { to: "a" },
    status: "SUCCEEDED", priority: "NORMAL", runAt: at, createdAt: at, updatedAt: at, startedAt: at, completedAt: at,
    attempts: 1, maxAttempts: 3, backoffStrategy: "EXPONENTIAL", backoffDelaySeconds: 1, backoffMaxDelaySeconds: 3600,
    backoffJitter: true, timeoutSeconds: 300, result: { ok: true }, lastError: null, idempotencyKey: null, orderingKey: null,
    callbackUrl: null, metadata: null, workflowId: null, workflowKey: null, scheduleId: null, cancelRequested: false,
    leaseGeneration: 1, leaseToken: null, leaseExpiresAt: null, workerId: null, dispatchGeneration: 1,
    ...overrides,
  };
}

const event = (status: string, taskId = "task_1"): NotifyEvent => ({ tenantId: "ten_1", taskId, payload: { status }, createdAt: at });
const hook = (id: string, events: string[]): WebhookTarget => ({ id, tenantId: "ten_1", url: `https://example.com/${id}`, events });

describe("planDeliveries", () => {
  it("builds the contract envelope with the task's fields", () => {
    const [d] = planDeliveries([event("SUCCEEDED")], new Map([["task_1", task()]]), new Map([["ten_1", [hook("whk_a", ["*"])]]]));
    expect(d).toMatchObject({ webhookId: "whk_a", url: "https://example.com/whk_a", event: "task.succeeded", taskId: "task_1" });
    expect(d?.id).toMatch(/^dlv_/);
    const body = JSON.parse(d?.body ?? "null") as { type: string; timestamp: string; data: { task: Record<string, unknown> } };
    expect(body.type).toBe("task.succeeded");
    expect(body.timestamp).toBe("2026-01-02T03:04:05.678Z");
    expect(body.data.task).toMatchObject({ id: "task_1", queue: "default", status: "SUCCEEDED", runAt: "2026-01-02T03:04:05.678Z", result: { ok: true } });
    expect(body.data.task).not.toHaveProperty("leaseToken");
    expect(body.data.task).not.toHaveProperty("callbackUrl");
  });

  it("respects each webhook's event filter and adds the callback", () => {
    const hooks = new Map([["ten_1", [hook("whk_dead", ["task.dead"]), hook("whk_ok", ["task.succeeded"])]]]);
    const planned = planDeliveries([event("SUCCEEDED")], new Map([["task_1", task({ callbackUrl: "https://cb.example/x" })]]), hooks);
    expect(planned.map((d) => d.webhookId)).toEqual(["whk_ok", null]);
    expect(planned[1]?.url).toBe("https://cb.example/x");
    expect(new Set(planned.map((d) => d.id)).size).toBe(2);
  });

  it("names the event after the transition, even if the task moved on since", () => {
    const planned = planDeliveries([event("DEAD")], new Map([["task_1", task({ status: "QUEUED" })]]), new Map([["ten_1", [hook("w", ["*"])]]]));
    expect(planned[0]?.event).toBe("task.dead");
  });

  it("tells the task as the transition left it: what a redrive changed since comes from the event", () => {
    const later = new Date("2026-01-02T03:09:00.000Z");
    const redrivenAndSucceeded = task({ status: "SUCCEEDED", attempts: 1, runAt: later, startedAt: later, completedAt: later, result: { ok: 2 }, lastError: "boom" });
    const payload = { status: "DEAD", attempts: 3, runAt: "2026-01-02T03:04:05.678+00:00", startedAt: "2026-01-02T03:04:05.678+00:00", completedAt: "2026-01-02T03:05:00.5+00:00", lastError: "boom" };
    const [d] = planDeliveries([{ ...event("DEAD"), payload }], new Map([["task_1", redrivenAndSucceeded]]), new Map([["ten_1", [hook("w", ["*"])]]]));
    const body = JSON.parse(d?.body ?? "null") as { data: { task: Record<string, unknown> } };
    expect(body.data.task).toMatchObject({ status: "DEAD", attempts: 3, result: null, lastError: "boom", completedAt: "2026-01-02T03:05:00.500Z", runAt: at.toISOString() });
    // An event written before the payload carried more than the status: the row as it is, named after the transition.
    expect(taskAtEvent({ status: "SUCCEEDED" }, task())).toEqual(task());
  });

  it("drops events whose task is gone or whose status is not terminal", () => {
    const hooks = new Map([["ten_1", [hook("w", ["*"])]]]);
    expect(planDeliveries([event("SUCCEEDED", "task_gone")], new Map([["task_1", task()]]), hooks)).toEqual([]);
    expect(planDeliveries([event("RUNNING")], new Map([["task_1", task()]]), hooks)).toEqual([]);
  });
});
