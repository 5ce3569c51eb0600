import { describe, expect, it } from "vitest";
import { Sleeper } from "./sleeper.js";

describe("Sleeper", () => {
  it("sleeps for its time unless woken, and a wake ends the sleep at once", async () => {
    const sleeper = new Sleeper();
    const started = Date.now();
    await sleeper.sleep(30);
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
    const long = sleeper.sleep(60_000);
    sleeper.wake();
    await long;
  });

  it("keeps a wake that came while nobody slept for the next sleep only", async () => {
    const sleeper = new Sleeper();
    sleeper.wake();
    sleeper.wake();
    await sleeper.sleep(60_000);
    let ended = false;
    const next = sleeper.sleep(50).then(() => {
      ended = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(ended).toBe(false);
    await next;
  });
});
