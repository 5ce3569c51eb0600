import { describe, expect, it } from "vitest";
import { occurrenceKey } from "./occurrence-key.js";

describe("occurrenceKey", () => {
  it("is id:version:ISO instant, millisecond precision, UTC", () => {
    expect(occurrenceKey("sch_abc", 3, new Date("2026-03-08T07:00:00Z"))).toBe("sch_abc:3:2026-03-08T07:00:00.000Z");
  });

  it("differs by version and by instant", () => {
    const t = new Date("2026-01-01T00:00:00Z");
    expect(occurrenceKey("s", 1, t)).not.toBe(occurrenceKey("s", 2, t));
    expect(occurrenceKey("s", 1, t)).not.toBe(occurrenceKey("s", 1, new Date(t.getTime() + 1)));
  });
});
