import { describe, expect, it } from "vitest";
import { BadUserInputError } from "./errors.js";
import { assertJsonWithin, jsonByteLength, jsonDepth } from "./json-limits.js";

function nested(depth: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = i % 2 === 0 ? [v] : { k: v };
  return v;
}

describe("jsonByteLength", () => {
  it("counts UTF-8 bytes of the JSON text", () => {
    expect(jsonByteLength({ a: 1 })).toBe(7);
    expect(jsonByteLength("é")).toBe(4); // quotes + 2-byte char
    expect(jsonByteLength("😀")).toBe(6);
    expect(jsonByteLength(null)).toBe(4);
    expect(jsonByteLength(undefined)).toBe(0);
  });
});

describe("jsonDepth", () => {
  it("counts container nesting", () => {
    expect(jsonDepth(1)).toBe(0);
    expect(jsonDepth(null)).toBe(0);
    expect(jsonDepth({})).toBe(1);
    expect(jsonDepth([[1]])).toBe(2);
    expect(jsonDepth({ a: [1, { b: 2 }], c: 3 })).toBe(3);
    expect(jsonDepth(nested(32))).toBe(32);
  });

  it("handles 100k levels without recursion", () => {
    expect(jsonDepth(nested(100_000))).toBe(100_000);
  });

  it("stops early past the limit", () => {
    expect(jsonDepth(nested(100_000), 32)).toBe(33);
  });

  it("counts shared (non-cyclic) references and rejects cycles", () => {
    const shared = { x: 1 };
    expect(jsonDepth([shared, [shared]])).toBe(3);
    const cyclic: Record<string, unknown> = {};
    cyclic["self"] = cyclic;
    expect(() => jsonDepth(cyclic)).toThrow(TypeError);
  });
});

describe("assertJsonWithin", () => {
  const limits = { maxBytes: 20, maxDepth: 3, path: "payload" };

  it("accepts values on the limits", () => {
    expect(() => assertJsonWithin(nested(3), limits)).not.toThrow();
    expect(() => assertJsonWithin("x".repeat(18), limits)).not.toThrow(); // 20 bytes
  });

  it("refuses values past the limits, naming path and limit", () => {
    expect(() => assertJsonWithin(nested(4), limits)).toThrow(/payload must not be nested deeper than 3 levels/);
    expect(() => assertJsonWithin("x".repeat(19), limits)).toThrow(/payload must not exceed 20 bytes/);
    try {
      assertJsonWithin(nested(100_000), limits);
      expect.unreachable();
    } catch (e: unknown) {
      expect(e).toBeInstanceOf(BadUserInputError);
      expect((e as BadUserInputError).fieldErrors[0]?.path).toBe("payload");
    }
  });

  it("refuses values JSON cannot encode", () => {
    expect(() => assertJsonWithin({ n: 1n }, limits)).toThrow(/JSON-serialisable/);
  });

  it("refuses NaN and Infinity, which encoding would store as null, naming where they are", () => {
    const wide = { maxBytes: 1000, maxDepth: 5, path: "payload" };
    expect(() => assertJsonWithin({ amount: Number.NaN }, wide)).toThrow("payload must hold only finite numbers (.amount is NaN)");
    expect(() => assertJsonWithin({ a: { list: [1, -1e400] } }, wide)).toThrow("(.a.list.1 is -Infinity)");
    expect(() => assertJsonWithin(Number.POSITIVE_INFINITY, wide)).toThrow("payload must hold only finite numbers (it is Infinity)");
    expect(() => assertJsonWithin({ big: 1.7976931348623157e308, small: -5e-324, list: [0, -0] }, wide)).not.toThrow();
  });
});
