import { describe, expect, it } from "vitest";
import { buildPushBody } from "./push-request.js";

describe("buildPushBody", () => {
  it("has exactly taskId, type, payload, attempt", () => {
    const body = buildPushBody({ taskId: "task_1", type: "email.send", payload: { to: "a@b" }, attempt: 2 });
    expect(body).toBe('{"taskId":"task_1","type":"email.send","payload":{"to":"a@b"},"attempt":2}');
  });

  it("adds parents only when given", () => {
    const body = JSON.parse(buildPushBody({ taskId: "t", type: "x", payload: null, attempt: 1, parents: { a: 1 } }));
    expect(body).toEqual({ taskId: "t", type: "x", payload: null, attempt: 1, parents: { a: 1 } });
    expect(JSON.parse(buildPushBody({ taskId: "t", type: "x", payload: 1, attempt: 1 }))).not.toHaveProperty("parents");
  });

  it("keeps a missing payload as null rather than dropping the field", () => {
    expect(JSON.parse(buildPushBody({ taskId: "t", type: "x", payload: undefined, attempt: 1 }))).toHaveProperty("payload", null);
  });
});
