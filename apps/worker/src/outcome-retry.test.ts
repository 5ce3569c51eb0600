import { describe, expect, it } from "vitest";
import { OUTCOME_RETRY_BASE_MS, OUTCOME_RETRY_MAX_MS, leaseEndsAt, outcomeRetryDelayMs } from "./outcome-retry.js";

describe("outcomeRetryDelayMs", () => {
  it("doubles per round from the base, with half of each step jittered", () => {
    expect(outcomeRetryDelayMs(0, 0)).toBe(OUTCOME_RETRY_BASE_MS / 2);
    expect(outcomeRetryDelayMs(0, 0.999999)).toBeCloseTo(OUTCOME_RETRY_BASE_MS, 3);
    expect(outcomeRetryDelayMs(1, 0)).toBe(OUTCOME_RETRY_BASE_MS);
    expect(outcomeRetryDelayMs(2, 0.5)).toBe(4 * OUTCOME_RETRY_BASE_MS * 0.75);
  });

  it("never waits longer than the cap, however many rounds failed", () => {
    for (const round of [4, 5, 10, 100, 10_000]) {
      expect(outcomeRetryDelayMs(round, 0.999999)).toBeLessThanOrEqual(OUTCOME_RETRY_MAX_MS);
      expect(outcomeRetryDelayMs(round, 0)).toBe(OUTCOME_RETRY_MAX_MS / 2);
    }
    expect(outcomeRetryDelayMs(3, 1, 100, 300)).toBe(300);
  });
});

describe("leaseEndsAt", () => {
  const at = (iso: string) => new Date(iso);
  it("counts the lease from the start statement's answer", () => {
    const started = { leaseExpiresAt: at("2026-01-01T00:05:15Z"), startInMs: 0, task: { startedAt: at("2026-01-01T00:00:00Z"), runAt: at("2025-12-31T23:59:00Z") } };
    expect(leaseEndsAt(started, 1_000)).toBe(1_000 + 315_000);
  });

  it("from runAt for an attempt started ahead of it", () => {
    const started = { leaseExpiresAt: at("2026-01-01T00:00:45Z"), startInMs: 250, task: { startedAt: at("2026-01-01T00:00:00Z"), runAt: at("2026-01-01T00:00:00Z") } };
    expect(leaseEndsAt(started, 10)).toBe(10 + 250 + 45_000);
  });
});
