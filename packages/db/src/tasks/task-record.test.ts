import { WITHHELD_BODY } from "@tasklane/core";
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { TASK_COLUMN_NAMES_BUT_BODIES, mapTaskRow } from "./task-record.js";

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
});
