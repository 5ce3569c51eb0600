import { describe, expect, it } from "vitest";
import { createFailureLog, createRepeatThrottle } from "./repeat-throttle.js";

describe("createRepeatThrottle", () => {
  it("lets the first failure through, then one per interval with the count suppressed, and the recovery once", () => {
    let now = 0;
    const throttle = createRepeatThrottle(1_000, () => now);
    const seen = [];
    for (let i = 0; i < 5; i++, now += 300) seen.push(throttle.failed());
    expect(seen).toEqual([{ first: true, suppressed: 0 }, undefined, undefined, undefined, { first: false, suppressed: 3 }]);
    expect(throttle.failed()).toBeUndefined();
    expect(throttle.recovered()).toEqual({ suppressed: 1 });
    expect(throttle.recovered()).toBeUndefined();
    // A new outage starts a new streak at once, whatever the interval.
    expect(throttle.failed()).toEqual({ first: true, suppressed: 0 });
  });
});

describe("createFailureLog", () => {
  it("logs a repeating loop failure once with its stack, then a summary per interval, then the recovery", () => {
    const lines: [string, Record<string, unknown>, string][] = [];
    const log = {
      error: (obj: Record<string, unknown>, msg: string) => lines.push(["error", obj, msg]),
      warn: (obj: Record<string, unknown>, msg: string) => lines.push(["warn", obj, msg]),
      info: (obj: Record<string, unknown>, msg: string) => lines.push(["info", obj, msg]),
    };
    let now = 0;
    const failures = createFailureLog(log as never, { fields: { loop: "leases" }, failed: "loop failed", recovered: "loop recovered", intervalMs: 30_000, now: () => now });
    const refused = new Error("connect ECONNREFUSED 127.0.0.1:5432");
    // Two ticks a second for 40 s of outage: 80 failures.
    for (let i = 0; i < 80; i++, now += 500) failures.failed(refused);
    failures.succeeded();
    failures.succeeded();
    expect(lines).toEqual([
      ["error", { loop: "leases", err: refused }, "loop failed"],
      ["error", { loop: "leases", error: "connect ECONNREFUSED 127.0.0.1:5432", repeated: true, suppressed: 59 }, "loop failed"],
      ["info", { loop: "leases", suppressed: 19 }, "loop recovered"],
    ]);
  });
});
