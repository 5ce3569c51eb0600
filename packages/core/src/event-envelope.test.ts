import { describe, expect, it } from "vitest";
import { EVENT_TYPES, buildEnvelope, eventTypeForTerminalStatus, matchesEventFilter } from "./event-envelope.js";
import { TaskStatus, isTerminalStatus } from "./statuses.js";

describe("eventTypeForTerminalStatus", () => {
  it("maps each terminal status to its event and others to null", () => {
    expect(eventTypeForTerminalStatus("SUCCEEDED")).toBe("task.succeeded");
    expect(eventTypeForTerminalStatus("DEAD")).toBe("task.dead");
    expect(eventTypeForTerminalStatus("CANCELLED")).toBe("task.cancelled");
    expect(eventTypeForTerminalStatus("SKIPPED")).toBe("task.skipped");
    for (const s of Object.values(TaskStatus)) {
      expect(eventTypeForTerminalStatus(s) !== null, s).toBe(isTerminalStatus(s));
    }
  });
});

describe("buildEnvelope", () => {
  it("uses ISO UTC with milliseconds", () => {
    const at = new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 67));
    const env = buildEnvelope("task.dead", { task: { id: "task_1" } }, at);
    expect(env).toEqual({ type: "task.dead", timestamp: "2024-01-02T03:04:05.067Z", data: { task: { id: "task_1" } } });
    expect(JSON.parse(JSON.stringify(env))).toEqual(env);
  });
});

describe("matchesEventFilter", () => {
  it("matches listed types and the wildcard", () => {
    expect(matchesEventFilter(["task.dead"], "task.dead")).toBe(true);
    expect(matchesEventFilter(["task.dead"], "task.succeeded")).toBe(false);
    expect(matchesEventFilter([], "task.dead")).toBe(false);
    for (const t of EVENT_TYPES) expect(matchesEventFilter(["*"], t)).toBe(true);
    expect(matchesEventFilter(["task.*"], "task.dead")).toBe(false);
  });
});
