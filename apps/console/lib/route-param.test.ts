import { describe, expect, it } from "vitest";
import { decodeSegment, escapeBrokenSegments } from "./route-param";

describe("decodeSegment", () => {
  it("decodes a segment as the browser encoded it", () => {
    expect(decodeSegment("task_0190f0f0f0f07000800000000000000a")).toBe("task_0190f0f0f0f07000800000000000000a");
    expect(decodeSegment("has%20space")).toBe("has space");
    expect(decodeSegment("a%2Fb")).toBe("a/b");
    expect(decodeSegment("%E6%97%A5%E6%9C%AC")).toBe("日本");
  });

  it("reads a broken escape as no record rather than throwing", () => {
    for (const broken of ["%", "%ZZ", "sch_%ZZ", "%E0%A4%A", "100%"]) expect(decodeSegment(broken), broken).toBeNull();
  });
});

describe("escapeBrokenSegments", () => {
  it("leaves a well-formed path as it is", () => {
    for (const path of ["/", "/tasks", "/tasks/task_0190f0f0f0f07000800000000000000a", "/queues/has%20space", "/queues/a%2Fb", "/x/%E6%97%A5"]) {
      expect(escapeBrokenSegments(path), path).toBe(path);
    }
  });

  it("escapes the stray % of a broken segment only, so the page gets the segment as typed", () => {
    expect(escapeBrokenSegments("/tasks/%E0%A4%A")).toBe("/tasks/%25E0%25A4%25A");
    expect(escapeBrokenSegments("/queues/%")).toBe("/queues/%25");
    expect(escapeBrokenSegments("/schedules/sch_%ZZ/x%20y")).toBe("/schedules/sch_%25ZZ/x%20y");
    const escaped = escapeBrokenSegments("/workflows/wf_%ZZ");
    expect(decodeSegment(escaped.split("/")[2]!)).toBe("wf_%ZZ");
  });
});
