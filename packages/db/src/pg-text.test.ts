import { describe, expect, it } from "vitest";
import { storableJson, storableText } from "./pg-text.js";

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
});
