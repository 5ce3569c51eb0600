import { describe, expect, it } from "vitest";
import { DEAD_LETTER_STATEMENT_BATCH, inDeadLetterBatches } from "./dead-letter-batches.js";

/** A dead-letter queue of `dead` tasks as the batch statement sees it: each call takes up to `batch`, finds up to batch + 1. */
function queueOf(dead: number) {
  const sizes: number[] = [];
  return {
    sizes,
    statement: async (batch: number) => {
      sizes.push(batch);
      const changed = Math.min(batch, dead);
      const found = Math.min(batch + 1, dead);
      dead -= changed;
      return { changed, found };
    },
  };
}

describe("inDeadLetterBatches", () => {
  it("takes 500 a statement up to max and says whether more remain", async () => {
    const q = queueOf(2_500);
    expect(await inDeadLetterBatches({ max: 1_000 }, q.statement)).toEqual({ count: 1_000, hasMore: true });
    expect(await inDeadLetterBatches({ max: 1_000 }, q.statement)).toEqual({ count: 1_000, hasMore: true });
    expect(await inDeadLetterBatches({ max: 1_000 }, q.statement)).toEqual({ count: 500, hasMore: false });
    expect(q.sizes).toEqual([500, 500, 500, 500, 500]);
    expect(DEAD_LETTER_STATEMENT_BATCH).toBe(500);
  });

  it("asks for no more than max in its last statement, and says none remain when exactly max were left", async () => {
    const q = queueOf(1_200);
    expect(await inDeadLetterBatches({ max: 1_200 }, q.statement)).toEqual({ count: 1_200, hasMore: false });
    expect(q.sizes).toEqual([500, 500, 200]);
  });

  it("stops where beforeBatch refuses, answering what it did with hasMore", async () => {
    const q = queueOf(2_000);
    const asked: [number, number][] = [];
    const done = await inDeadLetterBatches({ max: 2_000, statementBatch: 300, beforeBatch: (size, sofar) => (asked.push([size, sofar]), sofar < 600) }, q.statement);
    expect(done).toEqual({ count: 600, hasMore: true });
    expect(asked).toEqual([
      [300, 0],
      [300, 300],
      [300, 600],
    ]);
  });

  it("ends when a statement changes nothing, whatever it found", async () => {
    let calls = 0;
    const done = await inDeadLetterBatches({ max: 10_000 }, async () => {
      calls += 1;
      return { changed: 0, found: 501 };
    });
    expect(done).toEqual({ count: 0, hasMore: true });
    expect(calls).toBe(1);
  });
});
