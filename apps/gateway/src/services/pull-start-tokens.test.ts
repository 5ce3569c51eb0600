import { FAST_PATH_WAIT_MS, type FleetLimits } from "@tasklane/queue";
import { afterEach, describe, expect, it, vi } from "vitest";
import { PullStartTokens } from "./pull-start-tokens.js";

const rate = { perSecond: 1, burst: 5 };

/** The FleetLimits calls PullStartTokens makes, each recorded; the take answers what `answer` gives. */
function fakeLimits(ready: boolean, answer: () => Promise<{ granted: number; waitMs: number }>) {
  const taken: number[] = [];
  const returned: number[] = [];
  const limits = {
    redisReady: ready,
    takeStartTokens: (_t: string, _q: string, _p: number, _b: number, want: number) => {
      taken.push(want);
      return answer();
    },
    returnStartTokens: async (_t: string, _q: string, _p: number, _b: number, count: number) => {
      returned.push(count);
    },
  } as unknown as FleetLimits;
  return { limits, taken, returned };
}

afterEach(() => {
  vi.useRealTimers();
});

describe("PullStartTokens", () => {
  it("hands out what Redis grants while it answers", async () => {
    const { limits, taken } = fakeLimits(true, async () => ({ granted: 3, waitMs: 0 }));
    expect(await new PullStartTokens(limits).take("ten", "que", rate, 4)).toEqual({ granted: 3, waitMs: 0 });
    expect(taken).toEqual([4]);
  });

  it("grants nothing without asking while the connection is not ready, and says to look again later", async () => {
    const { limits, taken, returned } = fakeLimits(false, () => new Promise(() => undefined));
    const tokens = new PullStartTokens(limits);
    const got = await tokens.take("ten", "que", rate, 4);
    expect(got.granted).toBe(0);
    expect(got.waitMs).toBeGreaterThan(0);
    tokens.giveBack("ten", "que", rate, 2);
    // Neither would have waited anywhere but in ioredis's offline queue.
    expect(taken).toEqual([]);
    expect(returned).toEqual([]);
  });

  it("grants nothing once the take has waited FAST_PATH_WAIT_MS, reports it, and gives back what the late take got", async () => {
    vi.useFakeTimers();
    let answer: ((v: { granted: number; waitMs: number }) => void) | undefined;
    const { limits, returned } = fakeLimits(true, () => new Promise((resolve) => (answer = resolve)));
    const reported: unknown[] = [];
    const tokens = new PullStartTokens(limits, { onTakeError: (error) => reported.push(error) });
    const taking = tokens.take("ten", "que", rate, 4);
    await vi.advanceTimersByTimeAsync(FAST_PATH_WAIT_MS);
    const got = await taking;
    expect(got.granted).toBe(0);
    expect(got.waitMs).toBeGreaterThan(0);
    expect(reported).toEqual([expect.objectContaining({ name: "FastPathTimeout" })]);
    answer?.({ granted: 4, waitMs: 0 });
    await vi.advanceTimersByTimeAsync(0);
    expect(returned).toEqual([4]);
  });

  it("grants nothing when Redis refuses the take, reporting once per interval with the count", async () => {
    const { limits } = fakeLimits(true, () => Promise.reject(new Error("LOADING Redis is loading the dataset in memory")));
    const reported: [unknown, number][] = [];
    const tokens = new PullStartTokens(limits, { onTakeError: (error, _queueId, failures) => reported.push([error, failures]) });
    for (let i = 0; i < 3; i++) expect((await tokens.take("ten", "que", rate, 1)).granted).toBe(0);
    expect(reported).toEqual([[expect.objectContaining({ message: expect.stringContaining("LOADING") }), 1]]);
  });
});
