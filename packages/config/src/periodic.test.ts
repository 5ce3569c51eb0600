import { afterEach, describe, expect, it } from "vitest";
import { startPeriodic, type Periodic } from "./periodic.js";

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
