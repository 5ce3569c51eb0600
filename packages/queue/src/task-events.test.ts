import { describe, expect, it } from "vitest";
import { decodeTaskEvent, encodeTaskEvent, type TaskEventMessage } from "./task-events.js";
import { createKeySpace } from "./naming.js";

const event: TaskEventMessage = {
  eventId: "42",
  taskId: "task_1",
  tenantId: "ten_1",
  queueId: "que_1",
  workflowId: null,
  from: "QUEUED",
  to: "RUNNING",
  at: "2026-01-02T03:04:05.678Z",
};

describe("task event messages", () => {
  it("round-trips", () => {
    expect(decodeTaskEvent(encodeTaskEvent(event))).toEqual(event);
    expect(decodeTaskEvent(encodeTaskEvent({ ...event, from: null, workflowId: "wf_1" }))).toMatchObject({ from: null, workflowId: "wf_1" });
  });

  it("refuses anything malformed instead of throwing", () => {
    for (const bad of ["", "not json", "null", "[]", JSON.stringify({ ...event, to: "DONE" }), JSON.stringify({ ...event, eventId: 42 }), JSON.stringify({ ...event, at: "yesterday" }), JSON.stringify({ ...event, tenantId: "" })]) {
      expect(decodeTaskEvent(bad)).toBeNull();
    }
  });

  it("gives every tenant its own channel under the deployment prefix", () => {
    const keys = createKeySpace("tl");
    expect(keys.eventsChannel("ten_a")).toBe("tl:events:ten_a");
    expect(keys.eventsChannel("ten_a")).not.toBe(keys.eventsChannel("ten_b"));
  });
});
