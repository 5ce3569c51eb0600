import { describe, expect, it } from "vitest";
import { DEFAULT_BACKOFF, computeBackoffMs, decideAfterFailure, resolveBackoff, type BackoffPolicy } from "./backoff.js";

const noJitter = (strategy: BackoffPolicy["strategy"], delaySeconds: number, maxDelaySeconds?: number | null): BackoffPolicy => ({
  strategy,
  delaySeconds,
  maxDelaySeconds,
  jitter: false,
});
const DAY_MS = 86_400_000;

describe("computeBackoffMs", () => {
  it("EXPONENTIAL doubles from the base delay", () => {
    const p = noJitter("EXPONENTIAL", 2, 1000);
    expect([1, 2, 3, 4].map((n) => computeBackoffMs(p, n))).toEqual([2000, 4000, 8000, 16000]);
  });

  it("LINEAR grows by the base delay", () => {
    const p = noJitter("LINEAR", 1.5, 1000);
    expect([1, 2, 3].map((n) => computeBackoffMs(p, n))).toEqual([1500, 3000, 4500]);
  });

  it("FIXED is constant", () => {
    const p = noJitter("FIXED", 7, 1000);
    expect([1, 5, 50].map((n) => computeBackoffMs(p, n))).toEqual([7000, 7000, 7000]);
  });

  it("caps at maxDelaySeconds, and at 24 h when it is null", () => {
    expect(computeBackoffMs(noJitter("EXPONENTIAL", 1, 10), 5)).toBe(10_000);
    expect(computeBackoffMs(noJitter("EXPONENTIAL", 1, 10), 4)).toBe(8_000);
    expect(computeBackoffMs(noJitter("LINEAR", 3600, null), 100)).toBe(DAY_MS);
    expect(computeBackoffMs(noJitter("FIXED", 200_000, undefined), 1)).toBe(DAY_MS);
  });

  it("stays finite for huge or nonsensical attempt numbers", () => {
    for (const n of [1024, 5000, Number.MAX_SAFE_INTEGER, Number.POSITIVE_INFINITY]) {
      expect(computeBackoffMs(noJitter("EXPONENTIAL", 1, null), n)).toBe(DAY_MS);
    }
    expect(computeBackoffMs(noJitter("EXPONENTIAL", 1, 60), 0)).toBe(1000);
    expect(computeBackoffMs(noJitter("EXPONENTIAL", 1, 60), Number.NaN)).toBe(60_000);
    expect(computeBackoffMs(noJitter("EXPONENTIAL", 0, 60), 5000)).toBe(0);
  });

  it("equal jitter stays within [d/2, d] and is never immediate", () => {
    const p: BackoffPolicy = { strategy: "FIXED", delaySeconds: 10, jitter: true };
    expect(computeBackoffMs(p, 1, () => 0)).toBe(5000);
    expect(computeBackoffMs(p, 1, () => 0.999999)).toBe(10_000);
    expect(computeBackoffMs(p, 1, () => 0.5)).toBe(7500);
    let seed = 1;
    const lcg = () => ((seed = (seed * 48271) % 2147483647) / 2147483647);
    for (let i = 0; i < 1000; i++) {
      const d = computeBackoffMs(p, 1, lcg);
      expect(d).toBeGreaterThanOrEqual(5000);
      expect(d).toBeLessThanOrEqual(10_000);
    }
    expect(computeBackoffMs({ strategy: "FIXED", delaySeconds: 0.001, jitter: true }, 1, () => 0)).toBe(1);
  });

  it("a misbehaving random source cannot escape the bounds", () => {
    const p: BackoffPolicy = { strategy: "FIXED", delaySeconds: 10, jitter: true };
    expect(computeBackoffMs(p, 1, () => -5)).toBe(5000);
    expect(computeBackoffMs(p, 1, () => 7)).toBe(10_000);
  });
});

describe("resolveBackoff", () => {
  it("uses the default policy when none is given", () => {
    expect(resolveBackoff(null)).toEqual({ strategy: "EXPONENTIAL", delaySeconds: 1, maxDelaySeconds: 3600, jitter: true });
  });

  it("fills only the fields left null", () => {
    expect(resolveBackoff({ strategy: "LINEAR", delaySeconds: 5, maxDelaySeconds: null, jitter: false })).toEqual({
      strategy: "LINEAR",
      delaySeconds: 5,
      maxDelaySeconds: DEFAULT_BACKOFF.maxDelaySeconds,
      jitter: false,
    });
  });
});

describe("decideAfterFailure", () => {
  const backoff = noJitter("EXPONENTIAL", 1, 3600);

  it("retries with the backoff delay while attempts remain", () => {
    expect(decideAfterFailure({ attempt: 1, maxAttempts: 3, retryable: true, backoff })).toEqual({ kind: "retry", delayMs: 1000 });
    expect(decideAfterFailure({ attempt: 2, maxAttempts: 3, retryable: true, backoff })).toEqual({ kind: "retry", delayMs: 2000 });
  });

  it("is dead when the last attempt failed", () => {
    expect(decideAfterFailure({ attempt: 3, maxAttempts: 3, retryable: true, backoff })).toEqual({ kind: "dead", reason: "exhausted" });
    expect(decideAfterFailure({ attempt: 1, maxAttempts: 1, retryable: true, backoff })).toEqual({ kind: "dead", reason: "exhausted" });
  });

  it("is dead at once for a non-retryable error", () => {
    expect(decideAfterFailure({ attempt: 1, maxAttempts: 5, retryable: false, backoff })).toEqual({
      kind: "dead",
      reason: "non_retryable",
    });
  });

  it("honours Retry-After when longer than the backoff, never shorter, capped at 24 h", () => {
    const base = { attempt: 1, maxAttempts: 3, retryable: true, backoff };
    expect(decideAfterFailure({ ...base, retryAfterSeconds: 30 })).toEqual({ kind: "retry", delayMs: 30_000 });
    expect(decideAfterFailure({ ...base, attempt: 2, backoff: noJitter("FIXED", 60, null), retryAfterSeconds: 5 })).toEqual({
      kind: "retry",
      delayMs: 60_000,
    });
    expect(decideAfterFailure({ ...base, retryAfterSeconds: 10 * 86_400 })).toEqual({ kind: "retry", delayMs: DAY_MS });
    expect(decideAfterFailure({ ...base, retryAfterSeconds: Number.NaN })).toEqual({ kind: "retry", delayMs: 1000 });
  });

  it("passes the injected random source to the jitter", () => {
    const jittered: BackoffPolicy = { strategy: "FIXED", delaySeconds: 4, jitter: true };
    expect(decideAfterFailure({ attempt: 1, maxAttempts: 2, retryable: true, backoff: jittered, random: () => 0 })).toEqual({
      kind: "retry",
      delayMs: 2000,
    });
  });
});
