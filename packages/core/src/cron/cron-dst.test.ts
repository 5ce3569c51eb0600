/**
 * Daylight-saving transitions (the semantics are in cron-expression.ts's header).
 * 2026 transitions used here:
 *   America/New_York  2026-03-08 07:00Z  02:00 EST -> 03:00 EDT
 *                     2026-11-01 06:00Z  02:00 EDT -> 01:00 EST
 *   Europe/Berlin     2026-03-29 01:00Z  02:00 CET -> 03:00 CEST
 *                     2026-10-25 01:00Z  03:00 CEST -> 02:00 CET
 */
import { DateTime } from "luxon";
import { describe, expect, it } from "vitest";
import { nextOccurrence, nextOccurrences, occurrencesBetween } from "./cron-expression.js";

const NY = "America/New_York";
const BERLIN = "Europe/Berlin";
const MIN = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;

const iso = (ds: Date[]) => ds.map((d) => d.toISOString());
const at = (s: string) => new Date(s);
const localDay = (d: Date, tz: string) => DateTime.fromJSDate(d, { zone: tz }).toISODate();
const localTime = (d: Date, tz: string) => DateTime.fromJSDate(d, { zone: tz }).toFormat("HH:mm ZZ");

/**
 * Whatever instant the iteration starts from, it must see the same set of
 * occurrences. nextOccurrence(after) only changes value at an occurrence, so
 * starts just before, at and just after every occurrence in [from, to] are
 * checked, plus the same around a 5-minute grid (which holds the transitions
 * and the stretches where cron-parser goes wrong).
 */
function expectStartPointIndependent(expr: string, tz: string, from: string, to: string, gridMs = 5 * MIN, marginMs = 4 * DAY) {
  const start = Date.parse(from);
  const end = Date.parse(to);
  const reference = occurrencesBetween(expr, tz, new Date(start - marginMs), new Date(end + marginMs), 100_000).map((d) =>
    d.getTime(),
  );
  const starts = new Set<number>();
  for (let t = start; t <= end; t += gridMs) starts.add(t);
  for (const r of reference) if (r >= start && r <= end) starts.add(r);
  for (const t of starts) {
    for (const after of [t - 1, t, t + 1]) {
      const expected = reference.filter((r) => r > after).slice(0, 2);
      const got = nextOccurrences(expr, tz, new Date(after), 2).map((d) => d.getTime());
      if (got.join() !== expected.join()) {
        expect.fail(
          `${expr} in ${tz} after ${new Date(after).toISOString()}: got ${iso(got.map((g) => new Date(g)))}, expected ${iso(expected.map((g) => new Date(g)))}`,
        );
      }
    }
  }
}

describe("spring forward: a wall time that does not exist runs once, at the end of the gap", () => {
  it("30 2 * * * in New York on 2026-03-08 runs at 03:00 EDT", () => {
    const ds = nextOccurrences("30 2 * * *", NY, at("2026-03-06T12:00:00Z"), 4);
    expect(iso(ds)).toEqual([
      "2026-03-07T07:30:00.000Z", // 02:30 EST
      "2026-03-08T07:00:00.000Z", // 03:00 EDT, the first instant after the gap
      "2026-03-09T06:30:00.000Z", // 02:30 EDT
      "2026-03-10T06:30:00.000Z",
    ]);
    expect(localTime(ds[1] as Date, NY)).toBe("03:00 -04:00");
  });

  it("30 2 * * * in Berlin on 2026-03-29 runs at 03:00 CEST", () => {
    expect(iso(nextOccurrences("30 2 * * *", BERLIN, at("2026-03-28T12:00:00Z"), 2))).toEqual([
      "2026-03-29T01:00:00.000Z",
      "2026-03-30T00:30:00.000Z",
    ]);
  });

  it("several skipped wall times of one gap collapse into one run", () => {
    const day = (expr: string) => occurrencesBetween(expr, NY, at("2026-03-08T05:00:00Z"), at("2026-03-09T05:00:00Z"), 100);
    expect(iso(day("0,30 2 * * *"))).toEqual(["2026-03-08T07:00:00.000Z"]);
    expect(iso(day("*/15 2 * * *"))).toEqual(["2026-03-08T07:00:00.000Z"]);
    expect(iso(day("30 2,3 * * *"))).toEqual(["2026-03-08T07:00:00.000Z", "2026-03-08T07:30:00.000Z"]);
  });

  it("the day's run is not lost when the iteration starts just after the gap (cron-parser loses it)", () => {
    expect(nextOccurrence("30 2 * * *", NY, at("2026-03-08T06:59:59.999Z"))?.toISOString()).toBe("2026-03-08T07:00:00.000Z");
    expect(nextOccurrence("30 2 * * *", NY, at("2026-03-08T07:00:00Z"))?.toISOString()).toBe("2026-03-09T06:30:00.000Z");
  });
});

describe("fall back: a wall time that occurs twice runs once, at its first occurrence", () => {
  it("30 1 * * * in New York on 2026-11-01 runs at 01:30 EDT only", () => {
    const ds = nextOccurrences("30 1 * * *", NY, at("2026-10-30T12:00:00Z"), 3);
    expect(iso(ds)).toEqual(["2026-10-31T05:30:00.000Z", "2026-11-01T05:30:00.000Z", "2026-11-02T06:30:00.000Z"]);
    expect(localTime(ds[1] as Date, NY)).toBe("01:30 -04:00");
  });

  it("is not repeated when the iteration starts inside the second pass (cron-parser repeats it)", () => {
    expect(nextOccurrence("30 1 * * *", NY, at("2026-11-01T06:00:00Z"))?.toISOString()).toBe("2026-11-02T06:30:00.000Z");
    expect(nextOccurrence("30 1 * * *", NY, at("2026-11-01T06:29:00Z"))?.toISOString()).toBe("2026-11-02T06:30:00.000Z");
  });

  it("30 2 * * * in Berlin on 2026-10-25 runs at 02:30 CEST only", () => {
    expect(iso(nextOccurrences("30 2 * * *", BERLIN, at("2026-10-24T12:00:00Z"), 2))).toEqual([
      "2026-10-25T00:30:00.000Z",
      "2026-10-26T01:30:00.000Z",
    ]);
    expect(nextOccurrence("30 2 * * *", BERLIN, at("2026-10-25T01:00:00Z"))?.toISOString()).toBe("2026-10-26T01:30:00.000Z");
  });

  it("a fixed hour with several minutes runs through the first pass only", () => {
    expect(iso(occurrencesBetween("*/30 1 * * *", NY, at("2026-11-01T04:00:00Z"), at("2026-11-02T04:00:00Z"), 100))).toEqual([
      "2026-11-01T05:00:00.000Z",
      "2026-11-01T05:30:00.000Z",
    ]);
  });
});

describe("every-hour expressions follow elapsed time", () => {
  const diffs = (ds: Date[]) => ds.slice(1).map((d, i) => d.getTime() - (ds[i] as Date).getTime());

  it.each([
    [NY, "2026-03-08T05:00:00Z"],
    [NY, "2026-11-01T04:00:00Z"],
    [BERLIN, "2026-03-28T23:00:00Z"],
    [BERLIN, "2026-10-24T23:00:00Z"],
  ])("*/15 * * * * in %s from %s: every 15 minutes, nothing doubled or dropped", (tz, from) => {
    const ds = nextOccurrences("*/15 * * * *", tz, at(from), 24);
    expect(ds[0]?.getTime()).toBe(Date.parse(from) + 15 * MIN);
    expect(new Set(diffs(ds))).toEqual(new Set([15 * MIN]));
  });

  it("0 * * * * in New York: both 01:00s on 2026-11-01, and exactly hourly through both transitions", () => {
    const ds = nextOccurrences("0 * * * *", NY, at("2026-11-01T03:30:00Z"), 4);
    expect(iso(ds)).toEqual([
      "2026-11-01T04:00:00.000Z",
      "2026-11-01T05:00:00.000Z", // 01:00 EDT
      "2026-11-01T06:00:00.000Z", // 01:00 EST
      "2026-11-01T07:00:00.000Z",
    ]);
    for (const from of ["2026-03-01T00:00:00Z", "2026-10-25T00:00:00Z"]) {
      const twoWeeks = nextOccurrences("0 * * * *", NY, at(from), 14 * 24);
      expect(twoWeeks[0]?.getTime()).toBe(Date.parse(from) + HOUR);
      expect(new Set(diffs(twoWeeks))).toEqual(new Set([HOUR]));
    }
  });

  it("7 * * * * in New York skips only 02:07, which does not exist", () => {
    expect(iso(nextOccurrences("7 * * * *", NY, at("2026-03-08T05:00:00Z"), 4))).toEqual([
      "2026-03-08T05:07:00.000Z", // 00:07 EST
      "2026-03-08T06:07:00.000Z", // 01:07 EST
      "2026-03-08T07:07:00.000Z", // 03:07 EDT
      "2026-03-08T08:07:00.000Z",
    ]);
  });

  it("6 fields: */20 seconds straight through the repeated hour", () => {
    const ds = occurrencesBetween("*/20 * * * * *", NY, at("2026-11-01T05:59:00Z"), at("2026-11-01T06:01:00Z"), 100);
    expect(ds).toHaveLength(6);
    expect(new Set(diffs(ds))).toEqual(new Set([20_000]));
  });
});

describe("a daily fixed-time schedule runs exactly once every local day around both transitions", () => {
  it.each([
    ["30 2 * * *", NY],
    ["30 1 * * *", NY],
    ["0 2 * * *", NY],
    ["59 1 * * *", NY],
    ["30 2 * * *", BERLIN],
    ["0 3 * * *", BERLIN],
  ])("%s in %s", (expr, tz) => {
    for (const from of ["2026-03-01T12:00:00Z", "2026-10-15T12:00:00Z"]) {
      // 12:00Z is a local afternoon in both zones: the window holds 30 whole local days.
      const ds = occurrencesBetween(expr, tz, at(from), new Date(Date.parse(from) + 30 * DAY), 100);
      const days = ds.map((d) => localDay(d, tz));
      expect(new Set(days).size).toBe(30);
      expect(days).toHaveLength(30);
    }
  });
});

describe("the occurrence set does not depend on where the iteration starts", () => {
  it.each([
    ["30 2 * * *", NY, "2026-03-08T04:00:00Z", "2026-03-08T09:00:00Z"],
    ["30 1 * * *", NY, "2026-11-01T03:00:00Z", "2026-11-01T08:00:00Z"],
    ["*/30 1,2 * * *", NY, "2026-11-01T03:00:00Z", "2026-11-01T08:00:00Z"],
    ["*/30 1,2 * * *", NY, "2026-03-08T04:00:00Z", "2026-03-08T09:00:00Z"],
    ["*/15 * * * *", NY, "2026-11-01T03:00:00Z", "2026-11-01T08:00:00Z"],
    ["7 * * * *", NY, "2026-03-08T04:00:00Z", "2026-03-08T09:00:00Z"],
    ["30 2 * * *", BERLIN, "2026-03-28T23:00:00Z", "2026-03-29T04:00:00Z"],
    ["30 2 * * *", BERLIN, "2026-10-24T23:00:00Z", "2026-10-25T04:00:00Z"],
    ["*/15 * * * *", BERLIN, "2026-10-24T23:00:00Z", "2026-10-25T04:00:00Z"],
    // Lord Howe moves by 30 minutes: nothing here assumes one-hour shifts.
    ["30 2 * * *", "Australia/Lord_Howe", "2026-10-03T13:00:00Z", "2026-10-03T18:00:00Z"],
    ["45 1 * * *", "Australia/Lord_Howe", "2026-04-04T13:00:00Z", "2026-04-04T17:00:00Z"],
    ["*/10 * * * *", "Australia/Lord_Howe", "2026-04-04T13:00:00Z", "2026-04-04T17:00:00Z"],
    ["*/10 * * * *", "Australia/Lord_Howe", "2026-10-03T13:00:00Z", "2026-10-03T18:00:00Z"],
  ])("%s in %s, %s..%s", (expr, tz, from, to) => {
    expectStartPointIndependent(expr, tz, from, to);
  });

  it("*/20 * * * * * in New York across the repeated hour, every 7 s", () => {
    expectStartPointIndependent("*/20 * * * * *", NY, "2026-11-01T05:55:00Z", "2026-11-01T06:05:00Z", 7_000, HOUR);
  });
});
