import { describe, expect, it } from "vitest";
import { MAX_DELAY_SECONDS } from "../limits.js";
import { rescheduleTimeSchema, requestedRunAt } from "./reschedule.js";

const NOW = Date.parse("2030-01-01T00:00:00Z");
const ok = (v: unknown) => rescheduleTimeSchema.safeParse(v).success;

describe("rescheduleTimeSchema", () => {
  it("takes runAt or delaySeconds or neither, never both", () => {
    expect(ok({})).toBe(true);
    expect(ok({ runAt: null, delaySeconds: null })).toBe(true);
    expect(ok({ runAt: new Date(Date.now() + 60_000) })).toBe(true);
    expect(ok({ delaySeconds: 5 })).toBe(true);
    expect(ok({ runAt: new Date(Date.now() + 60_000), delaySeconds: 5 })).toBe(false);
  });

  it("has submission's bounds", () => {
    expect(ok({ runAt: new Date(Date.now() + (MAX_DELAY_SECONDS + 60) * 1000) })).toBe(false);
    expect(ok({ runAt: new Date("nope") })).toBe(false);
    expect(ok({ runAt: new Date(0) })).toBe(true);
    expect(ok({ delaySeconds: -1 })).toBe(false);
    expect(ok({ delaySeconds: MAX_DELAY_SECONDS + 1 })).toBe(false);
    expect(ok({ delaySeconds: Number.NaN })).toBe(false);
  });
});

describe("requestedRunAt", () => {
  it("null for now (a past runAt and a delay of 0 too: read on the database's clock); delaySeconds from the call's time", () => {
    expect(requestedRunAt({}, NOW)).toBeNull();
    expect(requestedRunAt({ runAt: new Date(0) }, NOW)).toBeNull();
    expect(requestedRunAt({ runAt: new Date(NOW) }, NOW)).toBeNull();
    expect(requestedRunAt({ delaySeconds: 0 }, NOW)).toBeNull();
    expect(requestedRunAt({ runAt: new Date(NOW + 5000) }, NOW)).toEqual(new Date(NOW + 5000));
    expect(requestedRunAt({ delaySeconds: 1.2345 }, NOW)).toEqual(new Date(NOW + 1235));
  });
});
