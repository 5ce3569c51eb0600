import { describe, expect, it } from "vitest";
import {
  BadUserInputError,
  ConflictError,
  ErrorCode,
  ForbiddenError,
  NotFoundError,
  OverloadedError,
  QuotaExceededError,
  RateLimitedError,
  StaleLeaseError,
  UnauthenticatedError,
  UserError,
  httpStatusForCode,
  isUserError,
} from "./errors.js";

describe("ErrorCode", () => {
  it("has exactly the contract's codes", () => {
    expect(Object.values(ErrorCode).sort()).toEqual(
      [
        "UNAUTHENTICATED",
        "FORBIDDEN",
        "NOT_FOUND",
        "BAD_USER_INPUT",
        "CONFLICT",
        "RATE_LIMITED",
        "QUOTA_EXCEEDED",
        "OVERLOADED",
        "INTERNAL_SERVER_ERROR",
      ].sort(),
    );
  });
});

describe("UserError family", () => {
  it("each subclass carries its code", () => {
    const cases: Array<[UserError, ErrorCode]> = [
      [new UnauthenticatedError(), "UNAUTHENTICATED"],
      [new ForbiddenError(), "FORBIDDEN"],
      [new NotFoundError("Task"), "NOT_FOUND"],
      [new BadUserInputError("bad"), "BAD_USER_INPUT"],
      [new ConflictError("nope"), "CONFLICT"],
      [new RateLimitedError(2), "RATE_LIMITED"],
      [new QuotaExceededError("too many"), "QUOTA_EXCEEDED"],
      [new OverloadedError(1), "OVERLOADED"],
      [new StaleLeaseError(), "CONFLICT"],
    ];
    for (const [err, code] of cases) {
      expect(err.code).toBe(code);
      expect(err).toBeInstanceOf(UserError);
      expect(err).toBeInstanceOf(Error);
      expect(isUserError(err)).toBe(true);
    }
  });

  it("names the subclass for logs", () => {
    expect(new StaleLeaseError().name).toBe("StaleLeaseError");
  });

  it("UNAUTHENTICATED has one fixed message", () => {
    expect(new UnauthenticatedError().message).toBe("Invalid or missing credentials");
  });

  it("NOT_FOUND names only the entity kind for a generated id", () => {
    const e = new NotFoundError("Task", "task_123");
    expect(e.message).toBe("Task not found");
    expect(e.extensions).toEqual({ entity: "Task", id: "task_123" });
  });

  it("NOT_FOUND names a queue by the name the caller gave", () => {
    const e = new NotFoundError("Queue", "emails");
    expect(e.message).toBe('Queue "emails" not found');
    expect(e.extensions).toEqual({ entity: "Queue", id: "emails" });
    expect(new NotFoundError("Queue").message).toBe("Queue not found");
  });

  it("BAD_USER_INPUT puts field errors in extensions", () => {
    const e = new BadUserInputError("Invalid input", [{ path: "type", message: "required" }]);
    expect(e.extensions).toEqual({ fieldErrors: [{ path: "type", message: "required" }] });
    expect(new BadUserInputError("x").extensions).toEqual({});
  });

  it("throttling errors carry whole retryAfterSeconds of at least 1", () => {
    expect(new RateLimitedError(2.1).extensions).toEqual({ retryAfterSeconds: 3 });
    expect(new OverloadedError(0).extensions).toEqual({ retryAfterSeconds: 1 });
    expect(new RateLimitedError(Number.NaN).retryAfterSeconds).toBe(1);
  });

  it("STALE_LEASE is a CONFLICT with a reason", () => {
    expect(new StaleLeaseError().extensions).toEqual({ reason: "STALE_LEASE" });
  });

  it("keeps the cause", () => {
    const cause = new Error("db down");
    expect(new UserError("INTERNAL_SERVER_ERROR", "x", {}, { cause }).cause).toBe(cause);
  });

  it("isUserError refuses look-alikes", () => {
    expect(isUserError(new Error("x"))).toBe(false);
    expect(isUserError({ code: "NOT_FOUND", message: "x" })).toBe(false);
    expect(isUserError(null)).toBe(false);
  });
});

describe("httpStatusForCode", () => {
  it("429 and 503 for throttling, 200 for the rest", () => {
    for (const code of Object.values(ErrorCode)) {
      const expected = code === "RATE_LIMITED" ? 429 : code === "OVERLOADED" ? 503 : 200;
      expect(httpStatusForCode(code)).toBe(expected);
    }
  });
});
