import { describe, expect, it } from "vitest";
import { MAX_PAYLOAD_BYTES, MAX_WORKFLOW_EDGES, MAX_WORKFLOW_TASKS } from "../limits.js";
import { parseInput } from "../schemas/parse.js";
import { submitWorkflowInputSchema, workflowTaskInputSchema } from "./workflow-input.js";

const task = (x: Record<string, unknown> = {}) => ({ key: "k", type: "t", ...x });
const wf = (x: Record<string, unknown>) => submitWorkflowInputSchema.safeParse({ name: "etl", tasks: [task()], ...x });

describe("workflowTaskInputSchema", () => {
  const ok = (x: Record<string, unknown>) => workflowTaskInputSchema.safeParse(task(x)).success;

  it("checks task fields like a task", () => {
    expect(ok({ queue: "emails", priority: "HIGH", maxAttempts: 5, timeoutSeconds: 60, backoff: { strategy: "FIXED", delaySeconds: 1 } })).toBe(true);
    expect(ok({ queue: null, payload: null, dependsOn: null })).toBe(true);
    expect(ok({ type: " " })).toBe(false);
    expect(ok({ queue: "bad name" })).toBe(false);
    expect(ok({ maxAttempts: 0 })).toBe(false);
    expect(ok({ payload: "x".repeat(MAX_PAYLOAD_BYTES) })).toBe(false);
  });

  it("keys are 1..100 of [A-Za-z0-9_.:-], and so are dependencies", () => {
    expect(ok({ key: "extract:users.v2-final_1" })).toBe(true);
    expect(ok({ key: "k".repeat(100) })).toBe(true);
    expect(ok({ key: "k".repeat(101) })).toBe(false);
    expect(ok({ key: "" })).toBe(false);
    expect(ok({ key: "a b" })).toBe(false);
    expect(ok({ key: "a/b" })).toBe(false);
    expect(ok({ dependsOn: ["a b"] })).toBe(false);
  });
});

describe("submitWorkflowInputSchema", () => {
  it("name not blank; 1..MAX_WORKFLOW_TASKS tasks; idempotencyKey optional", () => {
    expect(wf({}).success).toBe(true);
    expect(wf({ idempotencyKey: "nightly-2026-11-29" }).success).toBe(true);
    expect(wf({ name: " " }).success).toBe(false);
    expect(wf({ tasks: [] }).success).toBe(false);
    expect(wf({ tasks: Array.from({ length: MAX_WORKFLOW_TASKS }, (_, i) => task({ key: `t${i}` })) }).success).toBe(true);
    expect(wf({ tasks: Array.from({ length: MAX_WORKFLOW_TASKS + 1 }, (_, i) => task({ key: `t${i}` })) }).success).toBe(false);
    expect(wf({ idempotencyKey: "" }).success).toBe(false);
  });

  it("bounds the dependencies in all", () => {
    const keys = Array.from({ length: 201 }, (_, i) => `t${i}`);
    const tasks = Array.from({ length: 101 }, (_, i) => task({ key: `j${i}`, dependsOn: keys.slice(0, 200) }));
    const r = wf({ tasks });
    expect(MAX_WORKFLOW_EDGES).toBeLessThan(101 * 200);
    expect(r.success).toBe(false);
    expect(() => parseInput(submitWorkflowInputSchema, { name: "x", tasks })).toThrow(/dependencies in all/);
  });
});
