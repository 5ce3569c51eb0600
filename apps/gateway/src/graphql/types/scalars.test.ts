import { BadUserInputError } from "@tasklane/core";
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

describe("DateTime input", () => {
  const parse = (value: string) => DateTimeScalar.parseValue(value);
  const refusal = (value: string) => {
    try {
      parse(value);
      return null;
    } catch (error: unknown) {
      return error instanceof BadUserInputError ? error.code : String(error);
    }
  };

  it("reads an instant with its offset, to the millisecond", () => {
    expect(parse("2027-04-30T10:00:00Z").toISOString()).toBe("2027-04-30T10:00:00.000Z");
    expect(parse("2027-04-30T10:00:00.123+02:00").toISOString()).toBe("2027-04-30T08:00:00.123Z");
    expect(parse("2028-02-29T23:59:59-05:30").toISOString()).toBe("2028-03-01T05:29:59.000Z");
    expect(parse("2000-02-29T00:00Z").toISOString()).toBe("2000-02-29T00:00:00.000Z");
    expect(parse("0001-01-01T00:00:00Z").toISOString()).toBe("0001-01-01T00:00:00.000Z");
  });

  it("refuses a day the month does not have instead of rolling it into the next", () => {
    for (const value of ["2027-04-31T10:00:00Z", "2027-02-29T00:00:00Z", "1900-02-29T00:00:00Z", "2027-02-31T00:00:00Z", "0004-02-30T00:00:00Z"]) {
      expect(refusal(value), value).toBe("BAD_USER_INPUT");
    }
  });

  it("refuses fields out of range, and instants before year 1 (which Postgres cannot store)", () => {
    for (const value of [
      "2027-00-10T00:00:00Z",
      "2027-13-10T00:00:00Z",
      "2027-01-00T00:00:00Z",
      "2027-01-10T24:00:00Z",
      "2027-01-10T23:60:00Z",
      "2027-01-10T23:59:60Z",
      "2027-01-10T00:00:00+24:00",
      "2027-01-10T00:00:00+01:60",
      "0000-01-01T00:00:00Z",
      "0000-06-15T12:00:00Z",
      "0001-01-01T00:00:00+01:00",
      "2027-01-10T00:00:00", // no offset
      "2027-1-10T00:00:00Z",
    ]) {
      expect(refusal(value), value).toBe("BAD_USER_INPUT");
    }
  });
});
