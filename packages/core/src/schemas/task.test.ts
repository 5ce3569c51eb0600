import { describe, expect, it } from "vitest";
import { BadUserInputError } from "../errors.js";
import {
  MAX_BATCH_SIZE,
  MAX_DELAY_SECONDS,
  MAX_KEY_LENGTH,
  MAX_METADATA_BYTES,
  MAX_PAYLOAD_BYTES,
  MAX_TIMEOUT_SECONDS,
  MAX_TYPE_LENGTH,
  MAX_URL_LENGTH,
} from "../limits.js";
import { parseInput } from "./parse.js";
import { backoffInputSchema, submitTaskInputSchema, submitTasksInputSchema, taskFilterSchema } from "./task.js";

const ok = (input: Record<string, unknown>) => submitTaskInputSchema.safeParse({ type: "t", ...input }).success;

/** JSON string value whose encoding is exactly `bytes` long. */
const jsonOfBytes = (bytes: number) => "x".repeat(bytes - 2);

function nested(depth: number): unknown {
  let v: unknown = 0;
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}

describe("submitTaskInputSchema", () => {
  it("accepts the minimal input and treats null like omitted", () => {
    expect(ok({})).toBe(true);
    expect(
      ok({
        queue: null,
        payload: null,
        priority: null,
        runAt: null,
        delaySeconds: null,
        maxAttempts: null,
        backoff: null,
        timeoutSeconds: null,
        idempotencyKey: null,
        orderingKey: null,
        callbackUrl: null,
        metadata: null,
      }),
    ).toBe(true);
  });

  it("type: 1..MAX_TYPE_LENGTH and not blank", () => {
    expect(ok({ type: "a".repeat(MAX_TYPE_LENGTH) })).toBe(true);
    expect(ok({ type: "a".repeat(MAX_TYPE_LENGTH + 1) })).toBe(false);
    expect(ok({ type: "" })).toBe(false);
    expect(ok({ type: "   " })).toBe(false);
    expect(submitTaskInputSchema.safeParse({}).success).toBe(false);
  });

  it("queue: the queue name pattern", () => {
    expect(ok({ queue: "emails.high-prio_2" })).toBe(true);
    expect(ok({ queue: "a".repeat(64) })).toBe(true);
    expect(ok({ queue: "a".repeat(65) })).toBe(false);
    expect(ok({ queue: "-leading" })).toBe(false);
    expect(ok({ queue: "has space" })).toBe(false);
    expect(ok({ queue: "" })).toBe(false);
  });

  it("payload: at most MAX_PAYLOAD_BYTES and MAX_JSON_DEPTH", () => {
    expect(ok({ payload: jsonOfBytes(MAX_PAYLOAD_BYTES) })).toBe(true);
    expect(ok({ payload: jsonOfBytes(MAX_PAYLOAD_BYTES + 1) })).toBe(false);
    expect(ok({ payload: nested(32) })).toBe(true);
    expect(ok({ payload: nested(33) })).toBe(false);
    expect(ok({ payload: nested(50_000) })).toBe(false);
    expect(ok({ payload: [1, "two", { three: true }] })).toBe(true);
  });

  it("metadata: at most MAX_METADATA_BYTES", () => {
    expect(ok({ metadata: jsonOfBytes(MAX_METADATA_BYTES) })).toBe(true);
    expect(ok({ metadata: jsonOfBytes(MAX_METADATA_BYTES + 1) })).toBe(false);
  });

  it("priority: the enum", () => {
    expect(ok({ priority: "HIGH" })).toBe(true);
    expect(ok({ priority: "URGENT" })).toBe(false);
    expect(ok({ priority: "high" })).toBe(false);
  });

  it("runAt: a valid Date, at most MAX_DELAY_SECONDS ahead, past allowed", () => {
    const ahead = (s: number) => new Date(Date.now() + s * 1000);
    expect(ok({ runAt: ahead(MAX_DELAY_SECONDS - 60) })).toBe(true);
    expect(ok({ runAt: ahead(MAX_DELAY_SECONDS + 60) })).toBe(false);
    expect(ok({ runAt: new Date(0) })).toBe(true);
    expect(ok({ runAt: new Date("nope") })).toBe(false);
    expect(ok({ runAt: "2030-01-01T00:00:00Z" })).toBe(false);
  });

  it("delaySeconds: 0..MAX_DELAY_SECONDS, finite", () => {
    expect(ok({ delaySeconds: 0 })).toBe(true);
    expect(ok({ delaySeconds: 0.5 })).toBe(true);
    expect(ok({ delaySeconds: MAX_DELAY_SECONDS })).toBe(true);
    expect(ok({ delaySeconds: MAX_DELAY_SECONDS + 0.001 })).toBe(false);
    expect(ok({ delaySeconds: -0.001 })).toBe(false);
    expect(ok({ delaySeconds: Number.POSITIVE_INFINITY })).toBe(false);
    expect(ok({ delaySeconds: Number.NaN })).toBe(false);
  });

  it("runAt and delaySeconds together are refused, with the field named", () => {
    const r = submitTaskInputSchema.safeParse({ type: "t", runAt: new Date(), delaySeconds: 5 });
    expect(r.success).toBe(false);
    expect(r.error?.issues.map((i) => i.path.join("."))).toEqual(["delaySeconds"]);
  });

  it("maxAttempts: int 1..MAX_MAX_ATTEMPTS", () => {
    expect(ok({ maxAttempts: 1 })).toBe(true);
    expect(ok({ maxAttempts: 100 })).toBe(true);
    expect(ok({ maxAttempts: 0 })).toBe(false);
    expect(ok({ maxAttempts: 101 })).toBe(false);
    expect(ok({ maxAttempts: 2.5 })).toBe(false);
  });

  it("timeoutSeconds: int 1..MAX_TIMEOUT_SECONDS", () => {
    expect(ok({ timeoutSeconds: 1 })).toBe(true);
    expect(ok({ timeoutSeconds: MAX_TIMEOUT_SECONDS })).toBe(true);
    expect(ok({ timeoutSeconds: 0 })).toBe(false);
    expect(ok({ timeoutSeconds: MAX_TIMEOUT_SECONDS + 1 })).toBe(false);
    expect(ok({ timeoutSeconds: 1.5 })).toBe(false);
  });

  it.each(["idempotencyKey", "orderingKey"])("%s: 1..MAX_KEY_LENGTH", (field) => {
    expect(ok({ [field]: "k" })).toBe(true);
    expect(ok({ [field]: "k".repeat(MAX_KEY_LENGTH) })).toBe(true);
    expect(ok({ [field]: "k".repeat(MAX_KEY_LENGTH + 1) })).toBe(false);
    expect(ok({ [field]: "" })).toBe(false);
  });

  it("callbackUrl: http(s) syntax, at most MAX_URL_LENGTH", () => {
    const base = "https://example.com/";
    expect(ok({ callbackUrl: base + "a".repeat(MAX_URL_LENGTH - base.length) })).toBe(true);
    expect(ok({ callbackUrl: base + "a".repeat(MAX_URL_LENGTH - base.length + 1) })).toBe(false);
    expect(ok({ callbackUrl: "http://127.0.0.1/cb" })).toBe(true); // SSRF is decided elsewhere
    expect(ok({ callbackUrl: "ftp://example.com/" })).toBe(false);
    expect(ok({ callbackUrl: "/relative" })).toBe(false);
  });

  // new URL() drops these silently, so the URL would be stored as typed and dialled as something else (found by QA).
  it.each([" http://127.0.0.1/x", "http://127.0.0.1/x ", "\thttps://example.com/", "https://example.com/\n", "https://exa\nmple.com/", "https://example.com/a\tb", "\u0000https://example.com/", "https://example.com/\u001f"])(
    "callbackUrl: refuses %j, which a URL parser would quietly clean",
    (callbackUrl) => {
      expect(ok({ callbackUrl })).toBe(false);
    },
  );

  it("callbackUrl: a space inside (percent-encoded when dialled) is still accepted", () => {
    expect(ok({ callbackUrl: "https://example.com/a b?q=c d" })).toBe(true);
  });

  it("reports a deep payload through parseInput as BAD_USER_INPUT on payload", () => {
    try {
      parseInput(submitTaskInputSchema, { type: "t", payload: nested(40) });
      expect.unreachable();
    } catch (e: unknown) {
      expect(e).toBeInstanceOf(BadUserInputError);
      const err = e as BadUserInputError;
      expect(err.code).toBe("BAD_USER_INPUT");
      expect(err.fieldErrors).toEqual([{ path: "payload", message: "must not be nested deeper than 32 levels" }]);
      expect(err.message).toBe("Invalid payload: must not be nested deeper than 32 levels");
    }
  });
});

describe("submitTasksInputSchema", () => {
  it("accepts up to MAX_BATCH_SIZE inputs and names the failing index", () => {
    expect(submitTasksInputSchema.safeParse(Array.from({ length: MAX_BATCH_SIZE }, () => ({ type: "t" }))).success).toBe(true);
    expect(submitTasksInputSchema.safeParse(Array.from({ length: MAX_BATCH_SIZE + 1 }, () => ({ type: "t" }))).success).toBe(false);
    expect(() => parseInput(submitTasksInputSchema, [{ type: "t" }, { type: "t", maxAttempts: 0 }])).toThrow(
      expect.objectContaining({ fieldErrors: [expect.objectContaining({ path: "1.maxAttempts" })] }),
    );
  });
});

describe("backoffInputSchema", () => {
  it("bounds", () => {
    const b = (x: Record<string, unknown>) => backoffInputSchema.safeParse({ strategy: "FIXED", delaySeconds: 1, ...x }).success;
    expect(b({})).toBe(true);
    expect(b({ delaySeconds: 0 })).toBe(true);
    expect(b({ delaySeconds: 86_400 })).toBe(true);
    expect(b({ delaySeconds: 86_401 })).toBe(false);
    expect(b({ delaySeconds: -1 })).toBe(false);
    expect(b({ maxDelaySeconds: 86_400, jitter: false })).toBe(true);
    expect(b({ maxDelaySeconds: 86_401 })).toBe(false);
    expect(b({ strategy: "RANDOM" })).toBe(false);
    expect(backoffInputSchema.safeParse({ strategy: "FIXED" }).success).toBe(false);
  });
});

describe("taskFilterSchema", () => {
  it("accepts an empty filter and a full one", () => {
    expect(taskFilterSchema.safeParse({}).success).toBe(true);
    expect(
      taskFilterSchema.safeParse({
        status: ["QUEUED", "DEAD"],
        type: "email",
        queue: "default",
        workflowId: "wf_x",
        scheduleId: null,
        createdAfter: new Date(0),
        createdBefore: new Date(),
      }).success,
    ).toBe(true);
  });

  it("refuses unknown statuses and bad queue names", () => {
    expect(taskFilterSchema.safeParse({ status: ["DONE"] }).success).toBe(false);
    expect(taskFilterSchema.safeParse({ queue: "no spaces" }).success).toBe(false);
  });
});
