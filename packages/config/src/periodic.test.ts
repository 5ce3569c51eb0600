import { afterEach, describe, expect, it } from "vitest";
import { WAKE_SLOT_MS, startPeriodic, type Periodic } from "./periodic.js";

let loop: Periodic | undefined;
afterEach(async () => {
  await loop?.stop();
  loop = undefined;
});

const failOnError = (error: unknown) => {
  throw error;
};

describe("startPeriodic", () => {
  it("waits the interval after a tick that did not report more work", async () => {
    let ticks = 0;
    loop = startPeriodic(60_000, async () => void ticks++, failOnError);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(ticks).toBe(1);
  });

  it("a poke while idle runs the next tick at once", async () => {
    let ticks = 0;
    loop = startPeriodic(60_000, async () => void ticks++, failOnError);
    await new Promise((resolve) => setTimeout(resolve, 50));
    loop.poke();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(ticks).toBe(2);
  });

  it("a poke during a tick runs another right after it, which a tick that had already looked would miss", async () => {
    let ticks = 0;
    let release: (() => void) | undefined;
    loop = startPeriodic(
      60_000,
      async () => {
        ticks++;
        if (ticks === 1) await new Promise<void>((resolve) => (release = resolve));
      },
      failOnError,
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    loop.poke(); // while the first tick runs
    release?.();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(ticks).toBe(2);
  });
});

describe("startPeriodic's waits", () => {
  it("a tick's number is how long to wait before the next, at most the interval", async () => {
    const at: number[] = [];
    loop = startPeriodic(60_000, async () => (at.push(Date.now()), at.length === 1 ? 30 : 60_000), failOnError);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(at).toHaveLength(2);
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(25);
  });

  it("a number above the interval waits only the interval", async () => {
    let ticks = 0;
    loop = startPeriodic(30, async () => (ticks++, 60_000), failOnError);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(ticks).toBeGreaterThanOrEqual(3);
  });

  it("each wakeIn runs a tick at its time, whatever ran before it", async () => {
    const at: number[] = [];
    const started = Date.now();
    loop = startPeriodic(60_000, async () => void at.push(Date.now() - started), failOnError);
    await new Promise((resolve) => setTimeout(resolve, 20));
    loop.wakeIn(300);
    loop.wakeIn(100);
    loop.poke();
    await new Promise((resolve) => setTimeout(resolve, 600));
    // At start, the poke, then one tick for each wake-up, neither earlier than asked.
    expect(at).toHaveLength(4);
    expect(at[2]!).toBeGreaterThanOrEqual(115);
    expect(at[3]!).toBeGreaterThanOrEqual(315);
  });

  it("wake-ups within one slot share a tick", async () => {
    let ticks = 0;
    loop = startPeriodic(60_000, async () => void ticks++, failOnError);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const slotStart = Math.ceil(Date.now() / WAKE_SLOT_MS) * WAKE_SLOT_MS + WAKE_SLOT_MS;
    for (let k = 1; k <= 10; k++) loop.wakeIn(slotStart - Date.now() + k);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(ticks).toBe(2);
  });
});
