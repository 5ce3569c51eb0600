import { describe, expect, it } from "vitest";
import { BadUserInputError } from "../errors.js";
import {
  MAX_CRON_LENGTH,
  cronExpressionProblem,
  nextOccurrence,
  nextOccurrences,
  occurrencesBetween,
  timezoneProblem,
  validateCron,
} from "./cron-expression.js";

const iso = (ds: Date[]) => ds.map((d) => d.toISOString());
const at = (s: string) => new Date(s);

function fieldErrorsOf(fn: () => unknown) {
  try {
    fn();
  } catch (e: unknown) {
    expect(e).toBeInstanceOf(BadUserInputError);
    return (e as BadUserInputError).fieldErrors;
  }
  return expect.unreachable("did not throw");
}

describe("validateCron", () => {
  it.each([
    "* * * * *",
    "*/2 * * * * *",
    "0 9 * * MON-FRI",
    "0 0 L * *",
    "0 0 * * 5L",
    "0 0 * * 5#2",
    "0 0 ? * THU",
    "0 0 1 JAN,jul *",
    "0 0 29 2 *",
    " 0  0 * * * ",
    "59 59 23 31 12 *",
    "0 0 * * WED",
    "0 0 * * wed#2",
    "0 0 31 2,3 *",
    "0 0 1 JUL-DEC *",
    "0 0 1 jul-sep MON-FRI",
    "0 0 0 1 JUL-DEC *",
  ])("accepts %j", (expr) => {
    expect(() => validateCron(expr, "UTC")).not.toThrow();
  });

  it.each([
    ["* * *", /5 fields/],
    ["* * * *", /5 fields/],
    ["* * * * * * *", /5 fields/],
    ["", /5 fields/],
    ["61 * * * *", /expected range 0-59/],
    ["0 24 * * *", /expected range 0-23/],
    ["0 0 0 * *", /expected range 1-31/],
    ["0 0 * 13 *", /expected range 1-12/],
    ["0 0 * * 8", /expected range 0-7/],
    ["*/0 * * * *", /not a valid cron expression/],
    ["5-1 * * * *", /not a valid cron expression/],
    ["1,,2 * * * *", /not a valid cron expression/],
    ["a b c d e", /not a valid cron expression/],
    ["0 0 30 2 *", /^never matches a date: no month in the month field has a day in the day-of-month field/],
    ["0 0 31 4,6,9,11 *", /^never matches a date: no month/],
    ["0 0 15W * *", /^must not use W \(nearest weekday\)/],
    ["0 0 LW * *", /^must not use W \(nearest weekday\)/],
    ["0 0 W * *", /^must not use W \(nearest weekday\)/],
    ["0 0 L-2 * *", /^must not use L-n \(days before the last of the month\)/],
    ["0 0 0 1,L-3 * *", /^must not use L-n/],
    ["H * * * *", /H \(hashed\)/],
    ["H/5 * * * *", /H \(hashed\)/],
    ["* * * * *; DROP TABLE", /may only contain/],
    ["* * * * * && rm -rf /", /may only contain/],
    ["@daily", /may only contain/],
    ["0\t0 * * *", /may only contain/],
    ["０ * * * *", /may only contain/],
    ["0 0 * * MÖN", /may only contain/],
    ["* * * * *\n* * * * *", /may only contain/],
    [`0 0 * * ${"1,".repeat(60)}1`, new RegExp(`at most ${MAX_CRON_LENGTH}`)],
  ])("refuses %j on the cron field", (expr, message) => {
    const errors = fieldErrorsOf(() => validateCron(expr, "UTC"));
    expect(errors).toEqual([{ path: "cron", message: expect.stringMatching(message) }]);
  });

  it("accepts a rare but possible date: the fifth Friday of February", () => {
    expect(cronExpressionProblem("0 0 * 2 5#5")).toBeNull();
  });

  it.each(["Mars/Olympus", "UTC; DROP", "", " ", "+05:30", "UTC+1", "Etc/Unknown", "America/New_York ", "../etc/passwd", "Z"])(
    "refuses the zone %j on the timezone field",
    (tz) => {
      expect(fieldErrorsOf(() => validateCron("* * * * *", tz))).toEqual([{ path: "timezone", message: expect.any(String) }]);
    },
  );

  it.each(["UTC", "Asia/Kolkata", "America/New_York", "Europe/Berlin", "America/Argentina/Buenos_Aires", "Etc/GMT+5", "EST5EDT"])(
    "accepts the zone %j",
    (tz) => {
      expect(timezoneProblem(tz)).toBeNull();
    },
  );

  it("reports both fields at once, worded like parseInput", () => {
    try {
      validateCron("* * *", "Mars/Olympus");
      expect.unreachable();
    } catch (e: unknown) {
      const err = e as BadUserInputError;
      expect(err.code).toBe("BAD_USER_INPUT");
      expect(err.fieldErrors.map((f) => f.path)).toEqual(["cron", "timezone"]);
      expect(err.message).toMatch(/^Invalid cron: .* \(and 1 more\)$/);
    }
  });
});

describe("nextOccurrences", () => {
  it("5 fields: minutes, strictly after `after`", () => {
    expect(iso(nextOccurrences("*/15 * * * *", "UTC", at("2026-01-01T00:00:00Z"), 3))).toEqual([
      "2026-01-01T00:15:00.000Z",
      "2026-01-01T00:30:00.000Z",
      "2026-01-01T00:45:00.000Z",
    ]);
    expect(iso(nextOccurrences("*/15 * * * *", "UTC", at("2026-01-01T00:14:59.999Z"), 1))).toEqual(["2026-01-01T00:15:00.000Z"]);
  });

  it("6 fields: every 2 s gives instants 2 s apart, from a millisecond start", () => {
    const ds = nextOccurrences("*/2 * * * * *", "UTC", at("2026-01-01T00:00:00.500Z"), 5);
    expect(iso(ds)).toEqual([
      "2026-01-01T00:00:02.000Z",
      "2026-01-01T00:00:04.000Z",
      "2026-01-01T00:00:06.000Z",
      "2026-01-01T00:00:08.000Z",
      "2026-01-01T00:00:10.000Z",
    ]);
  });

  it("reads wall-clock times in the zone: Asia/Kolkata is +05:30", () => {
    expect(iso(nextOccurrences("0 9 * * *", "Asia/Kolkata", at("2026-01-01T00:00:00Z"), 2))).toEqual([
      "2026-01-01T03:30:00.000Z",
      "2026-01-02T03:30:00.000Z",
    ]);
    expect(iso(nextOccurrences("0 9 * * *", "UTC", at("2026-01-01T00:00:00Z"), 1))).toEqual(["2026-01-01T09:00:00.000Z"]);
  });

  it("day-of-month and day-of-week together match either (Vixie cron)", () => {
    expect(iso(nextOccurrences("0 0 13 * 5", "UTC", at("2026-02-01T00:00:00Z"), 3))).toEqual([
      "2026-02-06T00:00:00.000Z",
      "2026-02-13T00:00:00.000Z",
      "2026-02-20T00:00:00.000Z",
    ]);
  });

  it("L and #", () => {
    expect(iso(nextOccurrences("0 0 L * *", "UTC", at("2028-02-01T00:00:00Z"), 2))).toEqual([
      "2028-02-29T00:00:00.000Z",
      "2028-03-31T00:00:00.000Z",
    ]);
    expect(nextOccurrence("0 12 * * 1#1", "Europe/Berlin", at("2026-06-01T12:00:00Z"))?.toISOString()).toBe(
      "2026-07-06T10:00:00.000Z",
    );
  });

  it("count 0 gives nothing; bad arguments are refused", () => {
    expect(nextOccurrences("* * * * *", "UTC", at("2026-01-01T00:00:00Z"), 0)).toEqual([]);
    expect(() => nextOccurrences("* * * * *", "UTC", at("2026-01-01T00:00:00Z"), -1)).toThrow(RangeError);
    expect(() => nextOccurrences("* * * * *", "UTC", at("2026-01-01T00:00:00Z"), 1.5)).toThrow(RangeError);
    expect(() => nextOccurrences("* * * * *", "UTC", new Date(Number.NaN), 1)).toThrow(RangeError);
    expect(() => nextOccurrences("* * *", "UTC", at("2026-01-01T00:00:00Z"), 1)).toThrow(BadUserInputError);
    expect(() => nextOccurrences("* * * * *", "Mars/Olympus", at("2026-01-01T00:00:00Z"), 0)).toThrow(BadUserInputError);
  });

  it("finds a rare date years ahead", () => {
    expect(nextOccurrence("0 0 * 2 5#5", "UTC", at("2026-01-01T00:00:00Z"))?.toISOString()).toBe("2036-02-29T00:00:00.000Z");
  });
});

describe("occurrencesBetween", () => {
  it("is (after, until]", () => {
    expect(iso(occurrencesBetween("0 * * * *", "UTC", at("2026-01-01T00:00:00Z"), at("2026-01-01T03:00:00Z"), 100))).toEqual([
      "2026-01-01T01:00:00.000Z",
      "2026-01-01T02:00:00.000Z",
      "2026-01-01T03:00:00.000Z",
    ]);
  });

  it("stops at cap with the oldest ones", () => {
    const ds = occurrencesBetween("* * * * * *", "UTC", at("2026-01-01T00:00:00Z"), at("2026-01-02T00:00:00Z"), 1000);
    expect(ds).toHaveLength(1000);
    expect(ds[0]?.toISOString()).toBe("2026-01-01T00:00:01.000Z");
    expect(ds[999]?.toISOString()).toBe("2026-01-01T00:16:40.000Z");
  });

  it("empty window, zero cap", () => {
    const t = at("2026-01-01T00:00:00Z");
    expect(occurrencesBetween("* * * * *", "UTC", t, t, 10)).toEqual([]);
    expect(occurrencesBetween("* * * * *", "UTC", t, at("2026-01-01T00:00:59Z"), 10)).toEqual([]);
    expect(occurrencesBetween("* * * * *", "UTC", t, at("2026-01-01T01:00:00Z"), 0)).toEqual([]);
  });
});
