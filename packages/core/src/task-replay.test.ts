import { describe, expect, it } from "vitest";
import { ErrorCode, isUserError } from "./errors.js";
import { submitTaskInputSchema } from "./schemas/task.js";
import { normalizeTaskSpec } from "./schemas/task-spec.js";
import { TaskStatus } from "./statuses.js";
import { assertReplayable, replayInput, replayRefusal, type ReplaySource } from "./task-replay.js";

const original: ReplaySource = {
  status: TaskStatus.SUCCEEDED,
  workflowId: null,
  queueName: "emails",
  type: "send",
  payload: { to: "a@example.com" },
  metadata: { tag: "x" },
  priority: "HIGH",
  maxAttempts: 7,
  backoffStrategy: "LINEAR",
  backoffDelaySeconds: 2,
  backoffMaxDelaySeconds: 90,
  backoffJitter: false,
  timeoutSeconds: 45,
  callbackUrl: "https://example.com/cb",
  orderingKey: "customer-1",
};

describe("replayRefusal", () => {
  it.each([TaskStatus.SUCCEEDED, TaskStatus.DEAD, TaskStatus.CANCELLED, TaskStatus.SKIPPED])("replays a %s task outside workflows", (status) => {
    expect(replayRefusal({ status, workflowId: null })).toBeNull();
  });

  it.each([TaskStatus.SCHEDULED, TaskStatus.BLOCKED, TaskStatus.QUEUED, TaskStatus.RUNNING, TaskStatus.RETRYING])("refuses a %s task", (status) => {
    expect(replayRefusal({ status, workflowId: null })).toMatch(new RegExp(`only a finished task.*${status}`, "i"));
  });

  it("refuses a workflow's task whatever its status", () => {
    for (const status of Object.values(TaskStatus)) {
      expect(replayRefusal({ status, workflowId: "wf_1" })).not.toBeNull();
    }
    expect(replayRefusal({ status: TaskStatus.DEAD, workflowId: "wf_1" })).toMatch(/workflow/);
  });

  it("assertReplayable throws CONFLICT", () => {
    let thrown: unknown;
    try {
      assertReplayable({ status: TaskStatus.RUNNING, workflowId: null });
    } catch (error: unknown) {
      thrown = error;
    }
    expect(isUserError(thrown) && thrown.code).toBe(ErrorCode.CONFLICT);
    expect(() => assertReplayable({ status: TaskStatus.CANCELLED, workflowId: null })).not.toThrow();
  });
});

describe("replayInput", () => {
  it("is the original's submission, due now, without an idempotency key, and passes submitTask's schema", () => {
    const now = Date.parse("2026-12-06T10:00:00Z");
    const input = submitTaskInputSchema.parse(replayInput(original));
    const spec = normalizeTaskSpec(input, now);
    expect(spec).toEqual({
      type: "send",
      queue: "emails",
      payload: { to: "a@example.com" },
      metadata: { tag: "x" },
      priority: "HIGH",
      runAt: new Date(now),
      maxAttempts: 7,
      backoff: { strategy: "LINEAR", delaySeconds: 2, maxDelaySeconds: 90, jitter: false },
      timeoutSeconds: 45,
      idempotencyKey: null,
      orderingKey: "customer-1",
      callbackUrl: "https://example.com/cb",
    });
  });
});
