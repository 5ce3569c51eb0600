import { describe, expect, it } from "vitest";
import { DEFAULT_BACKOFF } from "../backoff.js";
import { parseInput } from "./parse.js";
import { normalizeTaskSpec } from "./task-spec.js";
import { submitTaskInputSchema } from "./task.js";

const NOW = Date.UTC(2024, 5, 1, 12, 0, 0, 0);
const spec = (input: Record<string, unknown>) => normalizeTaskSpec(parseInput(submitTaskInputSchema, { type: "t", ...input }), NOW);

describe("normalizeTaskSpec", () => {
  it("fills every default", () => {
    expect(spec({})).toEqual({
      type: "t",
      queue: "default",
      payload: null,
      priority: "NORMAL",
      runAt: new Date(NOW),
      maxAttempts: 3,
      backoff: { strategy: "EXPONENTIAL", delaySeconds: 1, maxDelaySeconds: 3600, jitter: true },
      timeoutSeconds: 300,
      idempotencyKey: null,
      orderingKey: null,
      callbackUrl: null,
      metadata: null,
    });
  });

  it("runs a runAt in the past at the submission time", () => {
    expect(spec({ runAt: new Date("1970-01-01T00:00:00Z") }).runAt).toEqual(new Date(NOW));
    expect(spec({ runAt: new Date(NOW - 1) }).runAt).toEqual(new Date(NOW));
    expect(spec({ runAt: new Date(NOW + 1) }).runAt).toEqual(new Date(NOW + 1));
  });

  it("treats explicit nulls like omitted fields", () => {
    expect(spec({ queue: null, priority: null, backoff: null, maxAttempts: null, payload: null })).toEqual(spec({}));
  });

  it("keeps what was given", () => {
    const runAt = new Date(NOW + 5000);
    const s = spec({
      queue: "emails",
      payload: { a: 1 },
      priority: "HIGH",
      runAt,
      maxAttempts: 7,
      backoff: { strategy: "LINEAR", delaySeconds: 2, maxDelaySeconds: 60, jitter: false },
      timeoutSeconds: 10,
      idempotencyKey: "k",
      orderingKey: "o",
      callbackUrl: "https://example.com/cb",
      metadata: { m: true },
    });
    expect(s).toMatchObject({
      queue: "emails",
      payload: { a: 1 },
      priority: "HIGH",
      maxAttempts: 7,
      backoff: { strategy: "LINEAR", delaySeconds: 2, maxDelaySeconds: 60, jitter: false },
      timeoutSeconds: 10,
      idempotencyKey: "k",
      orderingKey: "o",
      callbackUrl: "https://example.com/cb",
      metadata: { m: true },
    });
    expect(s.runAt.getTime()).toBe(runAt.getTime());
  });

  it("runAt from delaySeconds, to the millisecond", () => {
    expect(spec({ delaySeconds: 1.2345 }).runAt.getTime()).toBe(NOW + 1235);
    expect(spec({ delaySeconds: 0 }).runAt.getTime()).toBe(NOW);
  });

  it("merges a partial backoff with the defaults", () => {
    expect(spec({ backoff: { strategy: "FIXED", delaySeconds: 9 } }).backoff).toEqual({
      strategy: "FIXED",
      delaySeconds: 9,
      maxDelaySeconds: DEFAULT_BACKOFF.maxDelaySeconds,
      jitter: DEFAULT_BACKOFF.jitter,
    });
  });

  it("does not share the default backoff object between tasks", () => {
    const a = spec({});
    a.backoff.delaySeconds = 99;
    expect(spec({}).backoff.delaySeconds).toBe(1);
    expect(DEFAULT_BACKOFF.delaySeconds).toBe(1);
  });
});
