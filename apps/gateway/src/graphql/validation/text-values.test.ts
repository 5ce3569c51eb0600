import { parse } from "graphql";
import { describe, expect, it } from "vitest";
import { textRefusal } from "./text-values.js";

const doc = parse(`query ($v: String) { a(x: $v) }`);

describe("textRefusal", () => {
  it("lets ordinary text through, astral characters (paired surrogates) included", () => {
    expect(textRefusal(doc, { v: "plain", nested: { list: ["é", "😀", { k: "漢字" }] } })).toBeNull();
    expect(textRefusal(parse(`{ a(x: "😀 \\u00e9") }`), undefined)).toBeNull();
  });

  it("refuses NUL and unpaired surrogates in variables, values and keys, naming the path but not the value", () => {
    expect(textRefusal(doc, { v: "a\u0000b" })?.fieldErrors[0]?.path).toBe("variables.v");
    expect(textRefusal(doc, { v: { deep: ["x", "\ud800"] } })?.fieldErrors[0]?.path).toBe("variables.v.deep.1");
    expect(textRefusal(doc, { v: { ["k\udc00"]: 1 } })?.fieldErrors[0]?.path).toBe("variables.v");
    const refusal = textRefusal(doc, { v: "secret-value\u0000" });
    expect(refusal?.code).toBe("BAD_USER_INPUT");
    expect(refusal?.message).not.toContain("secret-value");
  });

  it("refuses document literals the parser decoded to NUL", () => {
    expect(textRefusal(parse(`{ a(x: "a\\u0000") }`), {})?.fieldErrors[0]?.path).toBe("document");
  });

  it("judges each request's variables afresh while a document's own verdict is kept", () => {
    const nul = parse(`{ a(x: "a\\u0000") }`);
    expect(textRefusal(doc, { v: "clean" })).toBeNull();
    expect(textRefusal(doc, { v: "a\u0000" })?.fieldErrors[0]?.path).toBe("variables.v");
    expect(textRefusal(doc, { v: "clean again" })).toBeNull();
    expect(textRefusal(nul, {})?.fieldErrors[0]?.path).toBe("document");
    expect(textRefusal(nul, { v: "clean" })?.fieldErrors[0]?.path).toBe("document");
  });

  it("walks a 10,000-deep value without overflowing the stack", () => {
    let deep: unknown = "\u0000";
    for (let i = 0; i < 10_000; i++) deep = [deep];
    expect(textRefusal(doc, { v: deep })?.code).toBe("BAD_USER_INPUT");
  });
});
