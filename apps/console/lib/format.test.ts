import { describe, expect, it } from "vitest";
import { inSentence } from "./format";

describe("inSentence", () => {
  it("lowers a label's first word, not an acronym", () => {
    expect(inSentence("Dead letters")).toBe("dead letters");
    expect(inSentence("Tasks")).toBe("tasks");
    expect(inSentence("API keys")).toBe("API keys");
    expect(inSentence("")).toBe("");
  });
});
