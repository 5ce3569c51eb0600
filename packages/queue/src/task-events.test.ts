import { describe, expect, it } from "vitest";
import { decodeTaskEvents, encodeTaskEvents, type TaskEventMessage } from "./task-events.js";
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
  it("round-trips a batch of one tenant's events, in order", () => {
    const batch = [event, { ...event, eventId: "43", from: null, workflowId: "wf_1" }, { ...event, eventId: "44", to: "SUCCEEDED" as const }];
    expect(decodeTaskEvents(encodeTaskEvents(batch))).toEqual(batch);
  });

  it("reads a single event, as a relay of the previous version publishes it", () => {
    expect(decodeTaskEvents(JSON.stringify(event))).toEqual([event]);
  });

  it("refuses anything malformed instead of throwing, an array with one bad element included", () => {
    const bad = [
      "",
      "not json",
      "null",
      "[]",
      "[null]",
      JSON.stringify({ ...event, to: "DONE" }),
      JSON.stringify({ ...event, eventId: 42 }),
      JSON.stringify({ ...event, at: "yesterday" }),
      JSON.stringify({ ...event, tenantId: "" }),
      JSON.stringify([event, { ...event, queueId: 7 }]),
    ];
    for (const message of bad) expect(decodeTaskEvents(message)).toBeNull();
  });

  it("gives every tenant its own channel under the deployment prefix", () => {
    const keys = createKeySpace("tl");
    expect(keys.eventsChannel("ten_a")).toBe("tl:events:ten_a");
    expect(keys.eventsChannel("ten_a")).not.toBe(keys.eventsChannel("ten_b"));
  });
});
