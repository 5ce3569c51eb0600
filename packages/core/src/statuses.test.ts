import { describe, expect, it } from "vitest";
import {
  AttemptOutcome,
  BackoffStrategy,
  MisfirePolicy,
  OverlapPolicy,
  PENDING_TASK_STATUSES,
  Priority,
  QueueMode,
  TaskStatus,
  TERMINAL_TASK_STATUSES,
  WorkflowStatus,
  isTerminalStatus,
  priorityOfRank,
  priorityRank,
} from "./statuses.js";

// Copied from shared/contract/schema.graphql: a rename here is a breaking API change.
const CONTRACT: Array<[string, Record<string, string>, string[]]> = [
  ["TaskStatus", TaskStatus, ["SCHEDULED", "BLOCKED", "QUEUED", "RUNNING", "RETRYING", "SUCCEEDED", "DEAD", "CANCELLED", "SKIPPED"]],
  ["Priority", Priority, ["HIGH", "NORMAL", "LOW"]],
  ["BackoffStrategy", BackoffStrategy, ["EXPONENTIAL", "LINEAR", "FIXED"]],
  ["QueueMode", QueueMode, ["PUSH", "PULL"]],
  ["MisfirePolicy", MisfirePolicy, ["SKIP", "FIRE_ONCE", "CATCH_UP"]],
  ["OverlapPolicy", OverlapPolicy, ["ALLOW", "SKIP", "QUEUE", "CANCEL_RUNNING"]],
  ["WorkflowStatus", WorkflowStatus, ["RUNNING", "SUCCEEDED", "FAILED", "CANCELLED"]],
  ["AttemptOutcome", AttemptOutcome, ["SUCCEEDED", "FAILED", "TIMED_OUT", "LEASE_EXPIRED", "CANCELLED"]],
];

describe("enums", () => {
  it.each(CONTRACT)("%s has exactly the contract values, keyed by themselves", (_name, actual, expected) => {
    expect(Object.values(actual).sort()).toEqual([...expected].sort());
    for (const [k, v] of Object.entries(actual)) expect(k).toBe(v);
  });
});

describe("status groups", () => {
  it("terminal and pending are disjoint, and RUNNING is neither", () => {
    expect(TERMINAL_TASK_STATUSES.filter((s) => PENDING_TASK_STATUSES.includes(s))).toEqual([]);
    expect(TERMINAL_TASK_STATUSES.length + PENDING_TASK_STATUSES.length).toBe(Object.keys(TaskStatus).length - 1);
    expect(isTerminalStatus(TaskStatus.RUNNING)).toBe(false);
  });

  it("isTerminalStatus", () => {
    expect(Object.values(TaskStatus).filter(isTerminalStatus).sort()).toEqual(["CANCELLED", "DEAD", "SKIPPED", "SUCCEEDED"]);
  });
});

describe("priorityOfRank", () => {
  it("inverts priorityRank, and takes a lane outside 1..3 as the nearest", () => {
    for (const p of [Priority.HIGH, Priority.NORMAL, Priority.LOW]) expect(priorityOfRank(priorityRank(p))).toBe(p);
    expect([0, 4].map(priorityOfRank)).toEqual([Priority.HIGH, Priority.LOW]);
  });
});

describe("priorityRank", () => {
  it("orders HIGH before NORMAL before LOW", () => {
    expect([Priority.LOW, Priority.HIGH, Priority.NORMAL].sort((a, b) => priorityRank(a) - priorityRank(b))).toEqual([
      "HIGH",
      "NORMAL",
      "LOW",
    ]);
    expect(priorityRank(Priority.HIGH)).toBe(1);
    expect(priorityRank(Priority.NORMAL)).toBe(2);
    expect(priorityRank(Priority.LOW)).toBe(3);
  });

  it("throws on a value outside the enum (assertNever)", () => {
    expect(() => priorityRank("URGENT" as Priority)).toThrow(/Unexpected value: "URGENT"/);
  });
});
