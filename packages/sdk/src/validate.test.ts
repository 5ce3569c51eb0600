import { describe, expect, it } from "vitest";
import { TasklaneError } from "./errors.js";
import { asDate, asIso, checkLocally, checkResult } from "./validate.js";

function refusal(result: unknown): TasklaneError | undefined {
  try {
    checkResult("completeTask", result);
    return undefined;
  } catch (e: unknown) {
    if (e instanceof TasklaneError) return e;
    throw e;
  }
}

class Money {
  constructor(readonly cents: number) {}
  toJSON() {
    return { cents: this.cents, currency: "EUR" };
  }
}
class Opaque {
  #secret = 1;
  get secret() {
    return this.#secret;
  }
}

describe("checkResult", () => {
  it("refuses a result JSON would turn into null or {}: a function, a symbol, an instance with nothing to encode", () => {
    expect(refusal(() => 1)).toMatchObject({ code: "BAD_USER_INPUT", message: expect.stringContaining("result must be JSON: it is a function") });
    expect(refusal(Symbol("s"))?.message).toContain("it is a symbol");
    expect(refusal(new Map([["a", 1]]))?.message).toContain("it is an instance of Map, which JSON encodes as {}");
    expect(refusal(new Set([1]))?.message).toContain("it is an instance of Set");
    expect(refusal(Promise.resolve(1))?.message).toContain("was it meant to be awaited?");
    expect(refusal(new Error("x"))?.message).toContain("throw it to fail the attempt");
    expect(refusal(new Opaque())?.message).toContain("it is an instance of Opaque");
    expect(refusal({ toJSON: () => () => 1 })?.message).toContain("it is a function");
    expect(refusal(() => 1)?.extensions).toMatchObject({ fieldErrors: [{ path: "result" }] });
  });

  it("lets through what JSON encodes as the handler meant: toJSON, plain and null-prototype objects, boxed values, nested functions dropped as JSON does", () => {
    for (const ok of [undefined, null, 0, "", {}, [], new Date(0), new Money(5), Object.create(null), new Number(3), new String("s"), { a: 1, f() {} }, [() => 1], new Uint8Array([1])]) {
      expect(refusal(ok)).toBeUndefined();
    }
  });

  it("refuses strings and keys the gateway cannot store, naming the path but never the text", () => {
    expect(refusal("x\u0000y")).toMatchObject({ code: "BAD_USER_INPUT", extensions: { fieldErrors: [{ path: "result" }] } });
    expect(refusal({ a: [1, { b: "half \ud800" }] })?.extensions).toMatchObject({ fieldErrors: [{ path: "result.a.1.b" }] });
    const keyed = refusal({ a: { "k\u0000": 1 } });
    expect(keyed?.extensions).toMatchObject({ fieldErrors: [{ path: "result.a" }] });
    expect(keyed?.message).not.toContain("\u0000");
    expect(refusal({ at: { toJSON: () => "\udc00" } })?.extensions).toMatchObject({ fieldErrors: [{ path: "result.at" }] });
    expect(refusal({ ok: "\u{1F600}" })).toBeUndefined();
  });
});

describe("DateTime inputs", () => {
  function refusalOf(check: () => unknown): TasklaneError | undefined {
    try {
      checkLocally("submitTask", check);
      return undefined;
    } catch (e: unknown) {
      if (e instanceof TasklaneError) return e;
      throw e;
    }
  }

  it("refuses a string without an offset, one that is no date, and an invalid Date, naming the field in fieldErrors", () => {
    const noOffset = refusalOf(() => asDate("2030-01-01T00:00:00"));
    expect(noOffset).toMatchObject({ code: "BAD_USER_INPUT", message: "submitTask: Invalid runAt: must be a Date or an ISO-8601 string with a time zone offset, e.g. 2030-01-01T00:00:00.000Z" });
    expect(noOffset?.fieldErrors).toEqual([{ path: "runAt", message: "must be a Date or an ISO-8601 string with a time zone offset, e.g. 2030-01-01T00:00:00.000Z" }]);
    expect(refusalOf(() => asDate("tomorrow"))?.fieldErrors).toEqual([{ path: "runAt", message: expect.stringContaining("time zone offset") }]);
    expect(refusalOf(() => asDate("2030-13-45T00:00:00Z", "0.runAt"))?.fieldErrors).toEqual([{ path: "0.runAt", message: "is not a valid date" }]);
    expect(refusalOf(() => asIso(new Date("nope"), "filter.createdAfter"))?.fieldErrors).toEqual([{ path: "filter.createdAfter", message: "is an invalid Date" }]);
  });

  it("takes a Date and an ISO string with an offset; the string goes to the API as given", () => {
    expect(asDate("2030-01-01T02:00:00+02:00")?.toISOString()).toBe("2030-01-01T00:00:00.000Z");
    expect(asIso("2030-01-01T02:00:00+02:00")).toBe("2030-01-01T02:00:00+02:00");
    expect(asIso(new Date(Date.UTC(2030, 0, 1)))).toBe("2030-01-01T00:00:00.000Z");
    expect(asIso(null)).toBeNull();
    expect(asDate(undefined)).toBeUndefined();
  });
});
