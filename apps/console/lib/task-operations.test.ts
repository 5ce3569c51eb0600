import { describe, expect, it } from "vitest";
import { TASK_OPERATION_DONE, isTaskOperationName } from "./task-operations";

describe("isTaskOperationName", () => {
  it("knows the task page's three operations and nothing else", () => {
    for (const name of ["cancel", "redrive", "discard"]) expect(isTaskOperationName(name), name).toBe(true);
    for (const other of ["delete", "", "constructor", "toString", undefined, 1]) expect(isTaskOperationName(other), String(other)).toBe(false);
    expect(TASK_OPERATION_DONE.cancel).toBe("Task cancelled.");
  });
});
