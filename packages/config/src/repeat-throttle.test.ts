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
    // A new outage an interval after the last one began starts a new streak at once, however soon after the recovery.
    expect(throttle.failed()).toEqual({ first: true, suppressed: 0 });
  });

  it("counts a failure that comes back within the interval as part of its streak, not as a new outage", () => {
    let now = 0;
    const throttle = createRepeatThrottle(1_000, () => now);
    expect(throttle.failed()).toEqual({ first: true, suppressed: 0 });
    now = 100;
    expect(throttle.recovered()).toEqual({ suppressed: 0 });
    now = 200;
    expect(throttle.failed()).toBeUndefined();
    now = 300;
    // Its failure line was answered already: this recovery is owed, reported once an interval has passed.
    expect(throttle.recovered()).toBeUndefined();
    now = 1_100;
    expect(throttle.recovered()).toEqual({ suppressed: 1 });
    expect(throttle.recovered()).toBeUndefined();
  });
});

/** A logger that keeps each line as [level, fields, message]. */
function recordingLog() {
  const lines: [string, Record<string, unknown>, string][] = [];
  const line = (level: string) => (obj: Record<string, unknown>, msg: string) => lines.push([level, obj, msg]);
  return { lines, log: { error: line("error"), warn: line("warn"), info: line("info") } };
}

describe("createFailureLog", () => {
  it("logs a repeating loop failure once with its stack, then a summary per interval, then the recovery", () => {
    const { lines, log } = recordingLog();
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

  it("logs a flapping failure (fails, works, fails again every second) like a repeating one, not a stack and a recovery each time", () => {
    const { lines, log } = recordingLog();
    let now = 0;
    const failures = createFailureLog(log as never, { fields: { session: "rotations" }, failed: "session lost", recovered: "session restored", intervalMs: 30_000, now: () => now });
    const lost = new Error("Connection terminated unexpectedly");
    // A minute of a session that fails every second and is back half a second later.
    for (let second = 0; second < 60; second++) {
      now = second * 1_000;
      failures.failed(lost);
      now += 500;
      failures.succeeded();
    }
    // Then it stays up: the flaps counted since the last line are reported once the interval is over.
    for (now = 60_500; now <= 61_500; now += 500) failures.succeeded();
    expect(lines).toEqual([
      ["error", { session: "rotations", err: lost }, "session lost"],
      ["info", { session: "rotations" }, "session restored"],
      ["error", { session: "rotations", err: lost, suppressed: 29 }, "session lost"],
      ["info", { session: "rotations" }, "session restored"],
      ["info", { session: "rotations", suppressed: 29 }, "session restored"],
    ]);
  });
});
