import { describe, expect, it } from "vitest";
import { safeCallback, signInPath } from "./callback-url";

describe("signInPath", () => {
  it("asks sign-in to come back to the requested page, query included", () => {
    expect(signInPath("/tasks/task_0190f0f0f0f07000800000000000000a")).toBe("/signin?callbackUrl=%2Ftasks%2Ftask_0190f0f0f0f07000800000000000000a");
    expect(signInPath("/tasks?status=DEAD&queue=hooks")).toBe(`/signin?callbackUrl=${encodeURIComponent("/tasks?status=DEAD&queue=hooks")}`);
    expect(signInPath("/schedules/sch_1", "expired")).toBe("/signin?reason=expired&callbackUrl=%2Fschedules%2Fsch_1");
  });

  it("leaves the callback out when there is nowhere worth returning to", () => {
    expect(signInPath(null)).toBe("/signin");
    expect(signInPath("/")).toBe("/signin");
    expect(signInPath(undefined, "expired")).toBe("/signin?reason=expired");
  });
});

describe("safeCallback", () => {
  it("keeps a path on this console", () => {
    expect(safeCallback("/dead-letters")).toBe("/dead-letters");
    expect(safeCallback(["/tasks?queue=hooks", "/other"])).toBe("/tasks?queue=hooks");
  });

  it("never sends the user to another origin", () => {
    for (const hostile of [
      "https://evil.example/",
      "//evil.example/tasks",
      "/\\evil.example",
      "\\\\evil.example",
      "javascript:alert(1)",
      // Dot segments that normalise to "//evil.example": the path redirected to would name another host.
      "/.//evil.example/x",
      "/%2e//evil.example",
      "/a/..//evil.example",
      "/./\\evil.example",
      "http:evil.example",
      " /tasks",
      "",
    ]) {
      expect(safeCallback(hostile), hostile).toBe("/");
    }
  });

  it("does not loop back to the sign-in page", () => {
    expect(safeCallback("/signin?callbackUrl=/tasks")).toBe("/");
  });
});
