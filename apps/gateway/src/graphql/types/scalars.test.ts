import { describe, expect, it } from "vitest";
import { DateTimeScalar } from "./scalars.js";

describe("DateTime serialisation", () => {
  it("writes UTC with milliseconds, the same for a repeated instant as for a new one", () => {
    const instants = [Date.UTC(2026, 11, 2, 13, 10, 1, 123), 0, Date.UTC(1969, 0, 1), Date.UTC(2026, 11, 2, 13, 10, 1, 123)];
    for (const ms of [...instants, ...instants]) expect(DateTimeScalar.serialize(new Date(ms))).toBe(new Date(ms).toISOString());
  });

  it("follows a Date that changed since it was last written", () => {
    const date = new Date(Date.UTC(2026, 0, 1));
    expect(DateTimeScalar.serialize(date)).toBe("2026-01-01T00:00:00.000Z");
    date.setTime(Date.UTC(2027, 0, 1));
    expect(DateTimeScalar.serialize(date)).toBe("2027-01-01T00:00:00.000Z");
  });

  it("still refuses what is not an instant", () => {
    expect(() => DateTimeScalar.serialize(new Date(Number.NaN))).toThrow(TypeError);
    expect(() => DateTimeScalar.serialize({})).toThrow(TypeError);
  });
});
