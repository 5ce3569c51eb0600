import { describe, expect, it } from "vitest";
import type { WorkflowRecord } from "../workflows/workflow-record.js";
import type { NotifyEvent, WebhookTarget } from "./plan-deliveries.js";
import { planWorkflowDeliveries, workflowEventOf } from "./plan-workflow-deliveries.js";

const at = new Date("2026-01-02T03:04:05.678Z");
const workflow: WorkflowRecord = { id: "wf_1", tenantId: "ten_1", name: "etl", status: "FAILED", idempotencyKey: null, createdAt: at, completedAt: at };
const event = (payload: unknown, taskId: string | null = null): NotifyEvent => ({ tenantId: "ten_1", taskId, payload, createdAt: at });
const hook = (id: string, events: string[]): WebhookTarget => ({ id, tenantId: "ten_1", url: `https://example.com/${id}`, events });
const finished = event({ event: "workflow.completed", workflowId: "wf_1", status: "FAILED" });

describe("planWorkflowDeliveries", () => {
  it("sends workflow.completed with data.workflow to subscribed webhooks only", () => {
    const hooks = new Map([["ten_1", [hook("whk_all", ["*"]), hook("whk_tasks", ["task.dead"]), hook("whk_wf", ["workflow.completed"])]]]);
    const planned = planWorkflowDeliveries([finished], new Map([["wf_1", workflow]]), hooks);
    expect(planned.map((d) => [d.webhookId, d.event, d.taskId, d.workflowId])).toEqual([
      ["whk_all", "workflow.completed", null, "wf_1"],
      ["whk_wf", "workflow.completed", null, "wf_1"],
    ]);
    expect(JSON.parse(planned[0]!.body)).toEqual({
      type: "workflow.completed",
      timestamp: "2026-01-02T03:04:05.678Z",
      data: { workflow: { id: "wf_1", name: "etl", status: "FAILED", createdAt: at.toISOString(), completedAt: at.toISOString() } },
    });
  });

  it("ignores task events, malformed payloads and workflows that are gone", () => {
    expect(workflowEventOf(event({ status: "SUCCEEDED" }, "task_1"))).toBeNull();
    expect(workflowEventOf(event({ event: "workflow.completed", workflowId: "wf_1", status: "DONE" }))).toBeNull();
    expect(workflowEventOf(event(null))).toBeNull();
    expect(planWorkflowDeliveries([finished], new Map(), new Map([["ten_1", [hook("whk_all", ["*"])]]]))).toEqual([]);
  });
});
