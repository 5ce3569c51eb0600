import { describe, expect, it } from "vitest";
import { RECONNECT_MS, ReconnectBackoff } from "./reconnect-backoff";

describe("ReconnectBackoff", () => {
  it("moves one step per lost stream, however often its loss is reported", () => {
    const backoff = new ReconnectBackoff<object>();
    const first = {};
    // A stream that sends "fallback" and then errors as its connection closes.
    expect(backoff.lost(first)).toBe(3_000);
    expect(backoff.lost(first)).toBeNull();
    expect(backoff.lost({})).toBe(10_000);
    const third = {};
    expect(backoff.lost(third)).toBe(30_000);
    expect(backoff.lost(third)).toBeNull();
    expect(backoff.lost({})).toBe(60_000);
    expect(backoff.lost({})).toBe(60_000);
  });

  it("starts from the first wait again once a stream went live", () => {
    const backoff = new ReconnectBackoff<object>();
    backoff.lost({});
    backoff.lost({});
    backoff.live();
    expect(backoff.lost({})).toBe(RECONNECT_MS[0]);
  });
});
