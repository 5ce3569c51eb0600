import { describe, expect, it } from "vitest";
import { decideOutcome, retryDelayMs } from "./retry-policy.js";

const SCHEDULE = [5, 30, 120];
const mid = () => 0.5;

describe("retryDelayMs", () => {
  it("follows the schedule, one entry per failed attempt", () => {
    expect(retryDelayMs(SCHEDULE, 1, undefined, mid)).toBe(5000);
    expect(retryDelayMs(SCHEDULE, 3, undefined, mid)).toBe(120_000);
  });

  it("is null once the schedule is used up (n entries = n + 1 attempts)", () => {
    expect(retryDelayMs(SCHEDULE, 4, undefined, mid)).toBeNull();
  });

  it("jitters by at most ±20 %", () => {
    expect(retryDelayMs(SCHEDULE, 2, undefined, () => 0)).toBe(24_000);
    expect(retryDelayMs(SCHEDULE, 2, undefined, () => 1)).toBe(36_000);
  });

  it("never comes back sooner than Retry-After", () => {
    expect(retryDelayMs(SCHEDULE, 1, 60, mid)).toBe(60_000);
    expect(retryDelayMs(SCHEDULE, 1, 1, mid)).toBe(5000);
  });
});

describe("decideOutcome", () => {
  const response = (status: number, retryAfterSeconds?: number) =>
    ({ kind: "response", status, retryAfterSeconds, snippet: "oops" }) as const;

  it("2xx is delivered", () => {
    expect(decideOutcome(response(204), 0, SCHEDULE, mid)).toEqual({ kind: "delivered", responseCode: 204 });
  });

  it("410 is gone at once, whatever the schedule left", () => {
    expect(decideOutcome(response(410), 0, SCHEDULE, mid)).toEqual({ kind: "gone", responseCode: 410 });
  });

  it("other statuses and network errors retry, then exhaust", () => {
    expect(decideOutcome(response(500), 0, SCHEDULE, mid)).toEqual({ kind: "retry", responseCode: 500, error: "HTTP 500: oops", delayMs: 5000 });
    expect(decideOutcome(response(302), 1, SCHEDULE, mid)).toMatchObject({ kind: "retry", responseCode: 302 });
    expect(decideOutcome({ kind: "error", error: "network error: ECONNREFUSED" }, 3, SCHEDULE, mid)).toEqual({
      kind: "exhausted",
      responseCode: null,
      error: "network error: ECONNREFUSED",
    });
  });

  it("honours Retry-After on a 429", () => {
    expect(decideOutcome(response(429, 90), 0, SCHEDULE, mid)).toMatchObject({ kind: "retry", delayMs: 90_000 });
  });

  it("a refused target is abandoned without an attempt", () => {
    expect(decideOutcome({ kind: "refused", reason: "target refused: local host name" }, 0, SCHEDULE, mid)).toEqual({
      kind: "abandoned",
      error: "target refused: local host name",
    });
  });
});
