import { describe, expect, it } from "vitest";
import { occurrenceKey } from "./occurrence-key.js";

describe("occurrenceKey", () => {
  it("is id:ISO instant, millisecond precision, UTC", () => {
    expect(occurrenceKey("sch_abc", new Date("2026-03-08T07:00:00Z"))).toBe("sch_abc:2026-03-08T07:00:00.000Z");
  });

  it("differs by schedule and by instant", () => {
    const t = new Date("2026-01-01T00:00:00Z");
    expect(occurrenceKey("s", t)).not.toBe(occurrenceKey("t", t));
    expect(occurrenceKey("s", t)).not.toBe(occurrenceKey("s", new Date(t.getTime() + 1)));
  });
});
