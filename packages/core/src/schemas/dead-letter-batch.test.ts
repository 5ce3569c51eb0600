import { describe, expect, it } from "vitest";
import { BadUserInputError } from "../errors.js";
import { parseInput } from "./parse.js";
import { DEFAULT_DEAD_LETTER_BATCH, MAX_DEAD_LETTER_BATCH, deadLetterBatchArgsSchema } from "./dead-letter-batch.js";

describe("deadLetterBatchArgsSchema", () => {
  it("defaults max to 1,000 and the queue to every queue", () => {
    expect(parseInput(deadLetterBatchArgsSchema, {})).toEqual({ queue: null, max: DEFAULT_DEAD_LETTER_BATCH });
    expect(parseInput(deadLetterBatchArgsSchema, { queue: null, max: null })).toEqual({ queue: null, max: 1_000 });
    expect(parseInput(deadLetterBatchArgsSchema, { queue: "emails", max: MAX_DEAD_LETTER_BATCH })).toEqual({ queue: "emails", max: 10_000 });
  });

  it.each([{ max: 0 }, { max: 10_001 }, { max: 1.5 }, { queue: "" }, { queue: "two words" }])("refuses %j naming the argument", (args) => {
    let error: unknown;
    try {
      parseInput(deadLetterBatchArgsSchema, args);
    } catch (e: unknown) {
      error = e;
    }
    expect(error).toBeInstanceOf(BadUserInputError);
    expect((error as BadUserInputError).message).toMatch(new RegExp(`Invalid ${Object.keys(args)[0]}`));
  });
});
