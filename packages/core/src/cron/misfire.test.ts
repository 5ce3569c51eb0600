import { describe, expect, it } from "vitest";
import { MisfirePolicy } from "../statuses.js";
import { MAX_CATCH_UP_RUNS, MISFIRE_GRACE_MS, MISFIRE_WINDOW, decideMisfire, decideMisfireWindow, missedReason, missedSummaryReason, type MissedSummary } from "./misfire.js";

const NOW = Date.parse("2026-01-01T12:00:00Z");
const ago = (ms: number) => new Date(NOW - ms);
const ms = (ds: Date[]) => ds.map((d) => NOW - d.getTime());
const decide = (policy: MisfirePolicy, agoMs: number[], graceMs = MISFIRE_GRACE_MS) =>
  decideMisfire({ policy, dueOccurrences: agoMs.map(ago), now: new Date(NOW), graceMs });

describe("MISFIRE_GRACE_MS", () => {
  it("is far above a 250 ms tick and below a one-minute cron period", () => {
    expect(MISFIRE_GRACE_MS).toBeGreaterThanOrEqual(100 * 250);
    expect(MISFIRE_GRACE_MS).toBeLessThan(60_000);
  });
});

describe("decideMisfire", () => {
  const missed = [3 * 60_000, 2 * 60_000, 60_000];
  const onTime = [MISFIRE_GRACE_MS, 250, 0];

  it.each(Object.values(MisfirePolicy))("%s: on-time occurrences (lateness <= grace) always fire", (policy) => {
    expect(decide(policy, onTime)).toEqual({ fire: onTime.map(ago), skip: [], coalesced: [] });
    expect(decide(policy, [])).toEqual({ fire: [], skip: [], coalesced: [] });
  });

  it("SKIP: missed ones are skipped, on-time ones fire", () => {
    const d = decide(MisfirePolicy.SKIP, [...missed, 1000]);
    expect(ms(d.fire)).toEqual([1000]);
    expect(ms(d.skip)).toEqual(missed);
    expect(d.coalesced).toEqual([]);
  });

  it("FIRE_ONCE: the latest missed fires for all of them; the rest are coalesced, not skipped", () => {
    const d = decide(MisfirePolicy.FIRE_ONCE, missed);
    expect(ms(d.fire)).toEqual([60_000]);
    expect(d.skip).toEqual([]);
    expect(ms(d.coalesced)).toEqual([3 * 60_000, 2 * 60_000]);
  });

  it("FIRE_ONCE: an on-time occurrence at the same tick fires too", () => {
    const d = decide(MisfirePolicy.FIRE_ONCE, [...missed, 500]);
    expect(ms(d.fire)).toEqual([60_000, 500]);
    expect(ms(d.coalesced)).toEqual([3 * 60_000, 2 * 60_000]);
  });

  it("CATCH_UP: every missed one fires, oldest first", () => {
    const d = decide(MisfirePolicy.CATCH_UP, [...missed, 500]);
    expect(ms(d.fire)).toEqual([...missed, 500]);
    expect(d.skip).toEqual([]);
  });

  it("CATCH_UP: at most MAX_CATCH_UP_RUNS missed fire, the most recent; older ones are skipped", () => {
    const backlog = Array.from({ length: MAX_CATCH_UP_RUNS + 5 }, (_, i) => (MAX_CATCH_UP_RUNS + 5 - i) * 60_000);
    const d = decide(MisfirePolicy.CATCH_UP, [...backlog, 0]);
    expect(d.fire).toHaveLength(MAX_CATCH_UP_RUNS + 1);
    expect(ms(d.skip)).toEqual(backlog.slice(0, 5));
    expect(ms(d.fire)).toEqual([...backlog.slice(5), 0]);
  });

  it("CATCH_UP: missed occurrences after these take the budget first", () => {
    const d = decideMisfire({ policy: MisfirePolicy.CATCH_UP, dueOccurrences: [ago(3000), ago(2000), ago(1000)], now: new Date(NOW), graceMs: 0, missedAfter: MAX_CATCH_UP_RUNS - 1 });
    expect(ms(d.fire)).toEqual([1000]);
    expect(ms(d.skip)).toEqual([3000, 2000]);
    expect(decideMisfire({ policy: MisfirePolicy.CATCH_UP, dueOccurrences: [ago(1000)], now: new Date(NOW), graceMs: 0, missedAfter: MAX_CATCH_UP_RUNS }).skip).toHaveLength(1);
  });

  it("FIRE_ONCE: with missed occurrences after these, all of these are coalesced", () => {
    const d = decideMisfire({ policy: MisfirePolicy.FIRE_ONCE, dueOccurrences: [ago(3000), ago(2000)], now: new Date(NOW), graceMs: 0, missedAfter: 1 });
    expect(d).toEqual({ fire: [], skip: [], coalesced: [ago(3000), ago(2000)] });
  });

  it("grace is the boundary: grace + 1 ms late is missed", () => {
    expect(ms(decide(MisfirePolicy.SKIP, [1001, 1000], 1000).skip)).toEqual([1001]);
    expect(ms(decide(MisfirePolicy.SKIP, [1001, 1000], 1000).fire)).toEqual([1000]);
  });

  it("every occurrence lands in exactly one list, and order of the input does not matter", () => {
    const input = [500, 90_000, 45_000, 600_000, 0];
    for (const policy of Object.values(MisfirePolicy)) {
      const d = decide(policy, input);
      const all = [...d.fire, ...d.skip, ...d.coalesced].map((x) => x.getTime()).sort();
      expect(all).toEqual(input.map((a) => NOW - a).sort());
      expect(ms(d.fire)).toEqual([...ms(d.fire)].sort((a, b) => b - a));
    }
  });

  it("an occurrence slightly after now (clock skew) counts as on time", () => {
    expect(ms(decide(MisfirePolicy.SKIP, [-500]).fire)).toEqual([-500]);
  });

  it("refuses a negative grace", () => {
    expect(() => decide(MisfirePolicy.SKIP, [], -1)).toThrow(RangeError);
  });
});

describe("missedReason", () => {
  it.each(Object.values(MisfirePolicy))("%s: says the occurrence was missed", (policy) => {
    expect(missedReason(policy)).toMatch(/^missed: /);
  });
});

describe("decideMisfireWindow", () => {
  const SECOND = 1000;
  /**
   * A per-second schedule whose scheduler was away for `outageS` seconds
   * recovers the way fireDueSchedules does: a window of at most MISFIRE_WINDOW
   * occurrences from next_run_at per pass, `passS` seconds between passes
   * (new occurrences fall due meanwhile), until next_run_at passes now.
   */
  function recover(policy: MisfirePolicy, outageS: number, passS: number, graceMs = 0) {
    let now = NOW;
    let next = NOW - outageS * SECOND;
    const fired: number[] = [];
    const skipped: number[] = [];
    const coalesced: number[] = [];
    const summaries: MissedSummary[] = [];
    for (let pass = 0; ; pass++) {
      expect(pass).toBeLessThan(100);
      const due = Math.floor((now - next) / SECOND) + 1;
      const occurrences = Array.from({ length: Math.min(due, MISFIRE_WINDOW) }, (_, i) => new Date(next + i * SECOND));
      const d = decideMisfireWindow({ policy, occurrences, more: due > MISFIRE_WINDOW, now: new Date(now), graceMs });
      expect(d.decided).toBeGreaterThan(0);
      expect(d.fire.length + d.skip.length + d.coalesced.length).toBe(d.decided);
      fired.push(...d.fire.map((x) => x.getTime()));
      skipped.push(...d.skip.map((x) => x.getTime()));
      coalesced.push(...d.coalesced.map((x) => x.getTime()));
      if (d.summary) summaries.push(d.summary);
      next += d.decided * SECOND;
      if (d.decided === due) break;
      now += passS * SECOND;
    }
    // With no grace only the occurrence at the last pass's `now` is on time.
    return { missedFired: fired.filter((x) => now - x > graceMs), fired, skipped, coalesced, summaries, end: now };
  }

  it("CATCH_UP: a 50-minute outage of a per-second schedule fires the newest MAX_CATCH_UP_RUNS in all and records the rest SKIPPED", () => {
    const { missedFired, fired, skipped, coalesced, end } = recover(MisfirePolicy.CATCH_UP, 3000, 0);
    expect(missedFired).toHaveLength(MAX_CATCH_UP_RUNS);
    expect(fired).toEqual([...missedFired, end]);
    expect(skipped.length + coalesced.length).toBe(3000 - MAX_CATCH_UP_RUNS);
    expect(Math.max(...skipped, ...coalesced)).toBeLessThan(Math.min(...fired));
    expect(Math.max(...missedFired)).toBe(end - SECOND);
  });

  it.each([MisfirePolicy.SKIP, MisfirePolicy.CATCH_UP])(
    "%s: a day's outage of a per-second schedule records each of the newest missed, and one SKIPPED run for each older window",
    (policy) => {
      const outageS = 86_400;
      const { skipped, coalesced, summaries, fired, end } = recover(policy, outageS, 0);
      // Every missed occurrence accounted for once: fired, recorded, or stood for by a summary.
      const missed = [...fired.filter((x) => x !== end), ...skipped, ...coalesced].sort((a, b) => a - b);
      expect(missed).toEqual(Array.from({ length: outageS }, (_, i) => end - (outageS - i) * SECOND));
      // Recorded: at most a window one by one, and one run per MAX_CATCH_UP_RUNS older ones (864,000 rows per ten schedules before).
      expect(skipped.length).toBeLessThanOrEqual(MISFIRE_WINDOW + Math.ceil(outageS / MAX_CATCH_UP_RUNS));
      // Each summary is a recorded occurrence, the latest of those it stands for, and they add up to what was not recorded.
      expect(summaries.reduce((n, x) => n + x.earlier, 0)).toBe(coalesced.length);
      for (const x of summaries) {
        expect(skipped).toContain(x.occurrence.getTime());
        expect(x.since.getTime()).toBe(x.occurrence.getTime() - x.earlier * SECOND);
      }
      expect(missedSummaryReason(summaries[0]!)).toBe(
        `missed, with the 999 missed occurrences before it since ${new Date(end - outageS * SECOND).toISOString()}, which are not recorded one by one`,
      );
    },
  );

  it("CATCH_UP: the cap holds for the recovery while new occurrences turn late between passes", () => {
    for (const outageS of [1500, 2500, 3000, 5000]) {
      const { missedFired, fired, skipped } = recover(MisfirePolicy.CATCH_UP, outageS, 1);
      expect(missedFired.length).toBe(Math.min(MAX_CATCH_UP_RUNS, outageS));
      expect(Math.max(...skipped)).toBeLessThan(Math.min(...fired));
    }
  });

  it("CATCH_UP: occurrences still on time fire beside the capped missed ones", () => {
    const { missedFired, fired } = recover(MisfirePolicy.CATCH_UP, 3000, 0, 10 * SECOND);
    expect(missedFired).toHaveLength(MAX_CATCH_UP_RUNS);
    expect(fired).toHaveLength(MAX_CATCH_UP_RUNS + 11);
  });

  it("FIRE_ONCE: one run for the whole backlog, the latest missed occurrence", () => {
    const { fired, skipped, coalesced, end } = recover(MisfirePolicy.FIRE_ONCE, 4500, 0);
    // The latest missed occurrence, and the one on time at the last pass.
    expect(fired).toEqual([end - SECOND, end]);
    expect(skipped).toEqual([]);
    expect(coalesced).toHaveLength(4499);
  });

  it("SKIP: every missed occurrence recorded, none fired, while they fit a window", () => {
    const { fired, skipped, summaries, end } = recover(MisfirePolicy.SKIP, MISFIRE_WINDOW - 1, 0, 0);
    expect(fired).toEqual([end]);
    expect(skipped).toHaveLength(MISFIRE_WINDOW - 1);
    expect(summaries).toEqual([]);
  });

  it("refuses a window cut short that is too small to see past the cap", () => {
    expect(() => decideMisfireWindow({ policy: MisfirePolicy.CATCH_UP, occurrences: [ago(5000)], more: true, now: new Date(NOW), graceMs: 0 })).toThrow(RangeError);
  });
});
