import { describe, expect, it } from "vitest";
import { PAUSED_QUEUE_NOTICES, RESCHEDULED_NOTICES, TASK_OPERATION_DONE, isTaskOperationName, noticeDependsOnQueue, taskPageNotice } from "./task-operations";

describe("isTaskOperationName", () => {
  it("knows the task page's three operations and nothing else", () => {
    for (const name of ["cancel", "redrive", "discard"]) expect(isTaskOperationName(name), name).toBe(true);
    for (const other of ["delete", "", "constructor", "toString", undefined, 1]) expect(isTaskOperationName(other), String(other)).toBe(false);
    expect(TASK_OPERATION_DONE.cancel).toBe("Task cancelled.");
  });
});

describe("taskPageNotice", () => {
  it("says when the task runs, and that its paused queue holds it back", () => {
    expect(taskPageNotice(undefined, "now")).toBe(RESCHEDULED_NOTICES.now);
    expect(taskPageNotice(undefined, "now", true)).toBe(PAUSED_QUEUE_NOTICES.now);
    expect(taskPageNotice(undefined, "later", true)).toBe(PAUSED_QUEUE_NOTICES.later);
    expect(taskPageNotice("redrive", undefined)).toBe(TASK_OPERATION_DONE.redrive);
    expect(taskPageNotice("redrive", undefined, true)).toBe(PAUSED_QUEUE_NOTICES.redrive);
    // A cancelled or discarded task does not run: its queue changes nothing.
    expect(taskPageNotice("cancel", undefined, true)).toBe(TASK_OPERATION_DONE.cancel);
    expect(taskPageNotice("discard", "now", true)).toBe(TASK_OPERATION_DONE.discard);
    expect(taskPageNotice("constructor", "toString", true)).toBeUndefined();
  });

  it("needs the queue read only for a notice that says when the task runs", () => {
    expect(noticeDependsOnQueue(undefined, "now")).toBe(true);
    expect(noticeDependsOnQueue(undefined, "later")).toBe(true);
    expect(noticeDependsOnQueue("redrive", undefined)).toBe(true);
    expect(noticeDependsOnQueue("cancel", "now")).toBe(false);
    expect(noticeDependsOnQueue(undefined, undefined)).toBe(false);
    expect(noticeDependsOnQueue(undefined, "constructor")).toBe(false);
  });
});
