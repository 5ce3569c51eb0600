import { describe, expect, it } from "vitest";
import { effectiveValues, toFilter } from "./task-filters";

const NOW = Date.parse("2026-11-29T12:00:00Z");

describe("task list filters", () => {
  it("applies a From or To date without Created set to Between (a date is never ignored)", () => {
    const values = effectiveValues({ from: "2026-11-29T10:00" });
    expect(values).toMatchObject({ range: "custom", from: "2026-11-29T10:00" });
    expect(toFilter(values, NOW)).toEqual({ createdAfter: "2026-11-29T10:00:00.000Z" });
    expect(toFilter(effectiveValues({ to: "2026-11-28T00:00:30" }), NOW)).toEqual({ createdBefore: "2026-11-28T00:00:30.000Z" });
  });

  it("takes both dates for Between", () => {
    const values = effectiveValues({ range: "custom", from: "2026-11-01T00:00", to: "2026-11-02T00:00", status: "DEAD" });
    expect(toFilter(values, NOW)).toEqual({ status: ["DEAD"], createdAfter: "2026-11-01T00:00:00.000Z", createdBefore: "2026-11-02T00:00:00.000Z" });
  });

  it("shows a preset range without dates, so the form says what the list applies", () => {
    const values = effectiveValues({ range: "1h", from: "2026-11-01T00:00" });
    expect(values).toMatchObject({ range: "1h", from: undefined, to: undefined });
    expect(toFilter(values, NOW)).toEqual({ createdAfter: "2026-11-29T11:00:00.000Z" });
  });

  it("drops what is not a date or a range", () => {
    expect(effectiveValues({ range: "forever", from: "yesterday" })).toMatchObject({ range: undefined, from: undefined });
    expect(toFilter(effectiveValues({ from: "2026-13-45T99:00" }), NOW)).toEqual({});
    expect(toFilter(effectiveValues({ status: "NOPE", queue: "hooks" }), NOW)).toEqual({ queue: "hooks" });
  });
});
