import { WITHHELD_BODY } from "@tasklane/core";
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { TASK_COLUMNS, TASK_COLUMN_NAMES_BUT_BODIES, mapTaskRow, taskColumnsOf } from "./task-record.js";

const row = { id: "task_1", payload: { n: 1 }, result: null, status: "QUEUED" };

describe("mapTaskRow and withheld bodies", () => {
  it("keeps bodies of rows without the flags (every read but the bulk ones)", () => {
    const task = mapTaskRow(row);
    expect(task.payload).toEqual({ n: 1 });
    expect(task.result).toBeNull();
  });

  it("puts WITHHELD_BODY where a bulk read withheld a payload or a result, each on its own flag", () => {
    const task = mapTaskRow({ ...row, payload: null, payload_withheld: true, result_withheld: false });
    expect(task.payload).toBe(WITHHELD_BODY);
    expect(task.result).toBeNull();
    expect(mapTaskRow({ ...row, payload: null, result: null, payload_withheld: true, result_withheld: true }).result).toBe(WITHHELD_BODY);
  });

  it("a withheld body cannot become a Postgres parameter or a JSON body", () => {
    const task = mapTaskRow({ ...row, payload: null, payload_withheld: true });
    // pg's own preparation of an object parameter (JSON.stringify), and what a webhook or PUSH body would do.
    const { prepareValue } = createRequire(import.meta.url)("pg/lib/utils.js") as { prepareValue(value: unknown): unknown };
    expect(() => prepareValue(task.payload)).toThrow(/withheld/);
    expect(() => JSON.stringify({ taskId: task.id, payload: task.payload })).toThrow(/withheld/);
  });

  it("names TASK_COLUMNS' outputs but the bodies, for the bulk reads to pass through", () => {
    expect(TASK_COLUMN_NAMES_BUT_BODIES).toContain("queue_name");
    expect(TASK_COLUMN_NAMES_BUT_BODIES).toContain("trace_parent");
    expect(TASK_COLUMN_NAMES_BUT_BODIES).not.toContain("payload");
    expect(TASK_COLUMN_NAMES_BUT_BODIES).not.toContain("result");
    expect(TASK_COLUMN_NAMES_BUT_BODIES.every((c) => /^[a-z_]+$/.test(c))).toBe(true);
  });

  it("TASK_COLUMNS and the names come from one list: every column of the task row, queue_name from the join, in mapTaskRow's order", () => {
    const names = ["id", "tenant_id", "queue_id", "queue_name", "type", "payload", "status", "priority", "run_at", "created_at", "updated_at", "started_at", "completed_at",
      "attempts", "max_attempts", "backoff_strategy", "backoff_delay_seconds", "backoff_max_delay_seconds", "backoff_jitter", "timeout_seconds", "result", "last_error",
      "idempotency_key", "ordering_key", "callback_url", "metadata", "workflow_id", "workflow_key", "schedule_id", "cancel_requested", "lease_generation", "lease_token",
      "lease_expires_at", "worker_id", "dispatch_generation", "occurrence_key", "trace_parent"];
    expect(TASK_COLUMNS).toBe(names.map((n) => (n === "queue_name" ? "q.name AS queue_name" : `t.${n}`)).join(", "));
    expect(TASK_COLUMN_NAMES_BUT_BODIES).toEqual(names.filter((n) => n !== "payload" && n !== "result"));
    expect(taskColumnsOf("u")).toBe(names.map((n) => (n === "queue_name" ? "q.name AS queue_name" : `u.${n}`)).join(", "));
  });
});
