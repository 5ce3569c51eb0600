import { describe, expect, it } from "vitest";
import { ServerClock } from "./server-clock.js";

describe("ServerClock", () => {
  it("knows nothing before its first observation", () => {
    expect(new ServerClock().msUntil(1_000, 0)).toBe(Number.POSITIVE_INFINITY);
  });

  it("counts from the bound an answer gives: the server's clock had read runAt − startInMs when it arrived", () => {
    const clock = new ServerClock();
    // The server's clock read 50,000 or later when the answer arrived at local 1,000.
    clock.observe(50_000, 0, 1_000);
    expect(clock.msUntil(50_200, 1_000)).toBeCloseTo(200, 1);
    expect(clock.msUntil(50_200, 1_150)).toBeCloseTo(50, 1);
    expect(clock.msUntil(50_200, 1_300)).toBe(0);
  });

  it("keeps the tightest bound: an answer that took longer on its way back says less", () => {
    const clock = new ServerClock();
    clock.observe(50_000, 0, 1_000);
    clock.observe(50_010, 10, 1_040); // the same server instant, arrived 40 ms later: a looser bound
    expect(clock.msUntil(50_200, 1_040)).toBeCloseTo(160, 1);
    clock.observe(50_150, 50, 1_080); // server instant 50,100: a quicker way back than the first, tighter by 20 ms
    expect(clock.msUntil(50_200, 1_080)).toBeCloseTo(100, 1);
  });

  it("lets an old bound lose value with age, so clocks running at different rates never make a task start early", () => {
    const clock = new ServerClock();
    clock.observe(50_000, 0, 0);
    // 100 s later the bound has given up 10 ms (100 ppm): the wait is that much longer.
    expect(clock.msUntil(150_000, 100_000)).toBeCloseTo(10, 3);
    // A fresh answer that is looser than the first was, but tighter than its aged value, replaces it.
    clock.observe(150_000, 5, 100_000);
    expect(clock.msUntil(150_000, 100_000)).toBeCloseTo(5, 3);
  });

  it("never starts a task before its runAt on the server's clock, whatever each answer's way back took", () => {
    // A server 7 s ahead; answers leave at server instants and take 0-30 ms to arrive.
    const offset = 7_000;
    const clock = new ServerClock();
    let local = 0;
    let next = 1;
    const random = () => ((next = (next * 48_271) % 2_147_483_647) / 2_147_483_647);
    for (let i = 0; i < 1_000; i++) {
      local += random() * 10;
      const serverAtAnswer = local + offset;
      const runAt = Math.floor(serverAtAnswer) + 1 + Math.floor(random() * 50);
      // The gateway rounds startInMs up, so runAt − startInMs is never after the answer left.
      const startInMs = Math.ceil(runAt - serverAtAnswer);
      local += random() * 30;
      clock.observe(runAt, startInMs, local);
      const startsAt = local + clock.msUntil(runAt, local);
      expect(startsAt + offset).toBeGreaterThanOrEqual(runAt);
    }
    // And once a quick answer has come, no later than a millisecond or so after it.
    expect(clock.msUntil(local + offset + 100, local)).toBeLessThan(101 + 1);
  });

  it("waitUntil sleeps again when a timer fires early, and stops when the sleep is cut short", async () => {
    const clock = new ServerClock();
    clock.observe(1_000_000, 0, performance.now());
    const asked: number[] = [];
    // A timer that fires 10 ms early, as one armed late in a long turn of the event loop does.
    const early = (ms: number) => {
      asked.push(ms);
      return new Promise<boolean>((resolve) => setTimeout(() => resolve(true), Math.max(0, ms - 10)));
    };
    expect(await clock.waitUntil(1_000_030, early)).toBe(true);
    expect(clock.msUntil(1_000_030)).toBe(0);
    expect(asked.length).toBeGreaterThanOrEqual(2);
    expect(await clock.waitUntil(1_000_000 + performance.now() + 1_000, async () => false)).toBe(false);
    let calls = 0;
    expect(await clock.waitUntil(0, async () => ++calls > 0)).toBe(true);
    expect(calls).toBe(0);
  });
});
