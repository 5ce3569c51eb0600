import { describe, expect, it } from "vitest";
import { cutText, isUnstorable, storableText } from "./storable-text.js";

describe("storable text", () => {
  it("replaces NUL and unpaired surrogates with U+FFFD and keeps pairs", () => {
    expect(storableText("a\u0000b")).toBe("a\uFFFDb");
    expect(storableText("\ud800x\udc00")).toBe("\uFFFDx\uFFFD");
    expect(storableText("\udc00\ud800")).toBe("\uFFFD\uFFFD");
    expect(storableText("ok \u{1F600} é")).toBe("ok \u{1F600} é");
    expect(isUnstorable("\u{1F600}")).toBe(false);
    expect(isUnstorable("x\ud83d")).toBe(true);
    expect(isUnstorable("\u0000")).toBe(true);
  });

  it("cuts on a code point boundary", () => {
    expect(cutText("ab\u{1F600}", 3)).toBe("ab");
    expect(cutText("ab\u{1F600}", 4)).toBe("ab\u{1F600}");
    expect(cutText("abcd", 2)).toBe("ab");
    expect(cutText("a\ud800", 1)).toBe("a");
  });
});
