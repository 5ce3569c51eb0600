/**
 * What one occurrence costs near a daylight-saving transition. The scheduler
 * asks for a schedule's next occurrences on every pass (materialiseWindow:
 * occurrencesBetween, then nextOccurrence), about once a second for a
 * per-second schedule, so a call must not walk an hour of wall times it then
 * throws away. The cost is counted in cron-parser steps (CronExpression#next),
 * not measured in time. Transitions as in cron-dst.test.ts:
 *   Europe/Berlin        2026-03-29 01:00Z  02:00 CET -> 03:00 CEST
 *                        2026-10-25 01:00Z  03:00 CEST -> 02:00 CET
 *   Australia/Lord_Howe  2026-04-04 15:00Z  02:00 +11 -> 01:30 +10:30
 */
import { CronExpression } from "cron-parser";
import { afterEach, describe, expect, it, vi } from "vitest";
import { nextOccurrence, nextOccurrences, occurrencesBetween } from "./cron-expression.js";

const BERLIN = "Europe/Berlin";
const iso = (ds: Date[]) => ds.map((d) => d.toISOString());
const at = (s: string) => new Date(s);

/** cron-parser steps taken by `fn`, and its result. */
function steps<T>(fn: () => T): { result: T; steps: number } {
  const spy = vi.spyOn(CronExpression.prototype, "next");
  try {
    const result = fn();
    return { result, steps: spy.mock.calls.length };
  } finally {
    spy.mockRestore();
  }
}

afterEach(() => vi.restoreAllMocks());

/** A few steps per occurrence asked for; walking the repeated or skipped hour second by second took 1,800-3,600. */
const FEW = 10;

describe("a per-second schedule near a transition costs a few steps per occurrence", () => {
  it.each([
    ["a day before fall back", "2026-10-24T12:00:00Z", "2026-10-24T12:00:01.000Z"],
    ["an hour before fall back", "2026-10-24T23:59:59Z", "2026-10-25T00:00:00.000Z"],
    ["in the first pass of the repeated hour", "2026-10-25T00:30:00Z", "2026-10-25T00:30:01.000Z"],
    ["in the second pass of the repeated hour", "2026-10-25T01:30:00Z", "2026-10-25T01:30:01.000Z"],
  ])("* * * * * * in Berlin, %s", (_, after, expected) => {
    const { result, steps: n } = steps(() => nextOccurrence("* * * * * *", BERLIN, at(after)));
    expect(result?.toISOString()).toBe(expected);
    expect(n).toBeLessThanOrEqual(FEW);
  });

  it("the last first-pass second is followed by the first second-pass one", () => {
    const { result, steps: n } = steps(() => nextOccurrences("* * * * * *", BERLIN, at("2026-10-25T00:59:58Z"), 3));
    expect(iso(result)).toEqual(["2026-10-25T00:59:59.000Z", "2026-10-25T01:00:00.000Z", "2026-10-25T01:00:01.000Z"]);
    expect(n).toBeLessThanOrEqual(FEW);
  });

  it("across the spring-forward gap: straight from 01:59:59 CET to 03:00:00 CEST", () => {
    const { result, steps: n } = steps(() => occurrencesBetween("* * * * * *", BERLIN, at("2026-03-29T00:59:57Z"), at("2026-03-29T01:00:01Z"), 100));
    expect(iso(result)).toEqual([
      "2026-03-29T00:59:58.000Z",
      "2026-03-29T00:59:59.000Z",
      "2026-03-29T01:00:00.000Z",
      "2026-03-29T01:00:01.000Z",
    ]);
    expect(n).toBeLessThanOrEqual(FEW);
  });

  it("Lord Howe's 30-minute fall back, a day ahead", () => {
    const { result, steps: n } = steps(() => nextOccurrence("*/5 * * * * *", "Australia/Lord_Howe", at("2026-04-04T03:00:00Z")));
    expect(result?.toISOString()).toBe("2026-04-04T03:00:05.000Z");
    expect(n).toBeLessThanOrEqual(FEW);
  });
});

describe("a fixed-hour expression jumps over a gap", () => {
  it("* * 2 * * * (every second of 02:xx) in Berlin: one run at the gap's end, then the next day's 02:00", () => {
    const { result, steps: n } = steps(() => nextOccurrences("* * 2 * * *", BERLIN, at("2026-03-29T00:00:00Z"), 2));
    expect(iso(result)).toEqual(["2026-03-29T01:00:00.000Z", "2026-03-30T00:00:00.000Z"]);
    expect(n).toBeLessThanOrEqual(FEW);
  });
});

describe("an every-hour expression on a rare date", () => {
  it("0 * 29 2 * in Berlin finds the next 29 February without walking the days to it", () => {
    const { result, steps: n } = steps(() => nextOccurrences("0 * 29 2 *", BERLIN, at("2026-03-01T00:00:00Z"), 2));
    expect(iso(result)).toEqual(["2028-02-28T23:00:00.000Z", "2028-02-29T00:00:00.000Z"]);
    expect(n).toBeLessThanOrEqual(FEW);
  });
});
