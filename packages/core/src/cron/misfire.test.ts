import { describe, expect, it } from "vitest";
import { MisfirePolicy } from "../statuses.js";
import { MAX_CATCH_UP_RUNS, MISFIRE_GRACE_MS, decideMisfire } from "./misfire.js";

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
