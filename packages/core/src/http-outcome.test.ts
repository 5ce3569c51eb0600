import { describe, expect, it } from "vitest";
import { classifyHttpStatus, parseRetryAfter } from "./http-outcome.js";

describe("classifyHttpStatus", () => {
  it.each([
    [200, "success"],
    [204, "success"],
    [299, "success"],
    [408, "retryable"],
    [429, "retryable"],
    [500, "retryable"],
    [503, "retryable"],
    [599, "retryable"],
    [400, "permanent"],
    [401, "permanent"],
    [404, "permanent"],
    [409, "permanent"],
    [422, "permanent"],
    [100, "permanent"],
    [301, "permanent"],
    [302, "permanent"],
    [304, "permanent"],
    [600, "permanent"],
    [0, "permanent"],
    [200.5, "permanent"],
  ] as const)("%d is %s", (status, expected) => {
    expect(classifyHttpStatus(status)).toBe(expected);
  });
});

describe("parseRetryAfter", () => {
  const now = Date.parse("2024-03-01T12:00:00Z");

  it("reads delta-seconds", () => {
    expect(parseRetryAfter("120", now)).toBe(120);
    expect(parseRetryAfter(" 0 ", now)).toBe(0);
  });

  it("reads an HTTP-date in each RFC 9110 form", () => {
    expect(parseRetryAfter("Fri, 01 Mar 2024 12:01:30 GMT", now)).toBe(90);
    expect(parseRetryAfter("Friday, 01-Mar-24 12:00:10 GMT", now)).toBe(10);
    expect(parseRetryAfter("Fri Mar  1 12:00:05 2024", now)).toBe(5);
  });

  it("a past HTTP-date means now", () => {
    expect(parseRetryAfter("Fri, 01 Mar 2024 11:00:00 GMT", now)).toBe(0);
  });

  it("caps at one day", () => {
    expect(parseRetryAfter("999999999999999999999", now)).toBe(86_400);
    expect(parseRetryAfter("Sun, 01 Dec 2024 12:00:00 GMT", now)).toBe(86_400);
  });

  it.each([null, undefined, "", "-5", "1.5", "soon", "1 Mar 2024 12:01:00", "2024-03-01T12:01:00Z", "Fri, 01 Mar 2024 12:01:30 PST"])(
    "%j is undefined",
    (header) => {
      expect(parseRetryAfter(header, now)).toBeUndefined();
    },
  );
});
