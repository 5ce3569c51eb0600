import { describe, expect, it } from "vitest";
import { PLATFORM_STOP_GRACE_MS, SHUTDOWN_DEADLINE_MS, platformStopGraceMs, workerShutdownDeadlineMs } from "../shutdown-deadlines.mjs";

describe("shutdown deadlines", () => {
  it("npm start waits past every app's deadline, the worker's for the drain grace it is given", () => {
    expect(PLATFORM_STOP_GRACE_MS).toBeGreaterThan(Math.max(...Object.values(SHUTDOWN_DEADLINE_MS)));
    expect(platformStopGraceMs({})).toBe(PLATFORM_STOP_GRACE_MS);
    expect(platformStopGraceMs({ WORKER_DRAIN_GRACE_SECONDS: "120" })).toBe(workerShutdownDeadlineMs(120_000) + 5_000);
    // A shorter grace never shortens the wait below the other apps' deadlines; an unreadable one stops the worker at start.
    expect(platformStopGraceMs({ WORKER_DRAIN_GRACE_SECONDS: "3" })).toBe(PLATFORM_STOP_GRACE_MS);
    expect(platformStopGraceMs({ WORKER_DRAIN_GRACE_SECONDS: "soon" })).toBe(PLATFORM_STOP_GRACE_MS);
  });
});
