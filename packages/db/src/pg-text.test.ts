import { describe, expect, it } from "vitest";
import pg from "pg";
import { hasUnpairedSurrogate, refusedForValue, storableJson, storableText } from "./pg-text.js";

describe("storable text", () => {
  it("replaces NUL characters and leaves everything else", () => {
    expect(storableText("HTTP 500: \u0000<<garbage>>\u00ff")).toBe("HTTP 500: \uFFFD<<garbage>>\u00ff");
    expect(storableText("plain")).toBe("plain");
  });

  it("replaces \\u0000 escapes in JSON but not an escaped backslash followed by u0000", () => {
    const json = JSON.stringify({ a: "x\u0000y", b: "\\u0000" });
    const safe = storableJson(json);
    expect(JSON.parse(safe)).toEqual({ a: "x\uFFFDy", b: "\\u0000" });
    expect(storableJson('{"a":1}')).toBe('{"a":1}');
  });

  it("finds unpaired surrogates, in values and keys, in what JSON.stringify writes, and nothing else", () => {
    expect(hasUnpairedSurrogate(JSON.stringify({ a: "\ud800" }))).toBe(true);
    expect(hasUnpairedSurrogate(JSON.stringify({ a: "x\udc00" }))).toBe(true);
    expect(hasUnpairedSurrogate(JSON.stringify({ ["k\udbff"]: 1 }))).toBe(true);
    expect(hasUnpairedSurrogate(JSON.stringify(["\\", "\ud800"]))).toBe(true);
    // Paired surrogates (an emoji), its escape as plain text, and an escaped backslash before "ud800".
    expect(hasUnpairedSurrogate(JSON.stringify({ a: "😀", b: "\\ud800", c: "\\\\ud800" }))).toBe(false);
    expect(hasUnpairedSurrogate(JSON.stringify({ a: "plain", n: 1 }))).toBe(false);
  });

  it("tells a value the database refused from a failure of the database itself", () => {
    const refusal = (code: string) => Object.assign(new pg.DatabaseError("refused", 0, "error"), { code });
    expect(refusedForValue(refusal("22P02"))).toBe(true);
    expect(refusedForValue(refusal("54000"))).toBe(true);
    expect(refusedForValue(refusal("40P01"))).toBe(false);
    expect(refusedForValue(refusal("57P01"))).toBe(false);
    expect(refusedForValue(new Error("Connection terminated unexpectedly"))).toBe(false);
  });
});
