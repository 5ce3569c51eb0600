import { describe, expect, it } from "vitest";
import { ANSWER_BODY_BYTES, ANSWER_TASK_ROWS, AnswerBudget, WITHHELD_BODY, WithheldBodyError, tooManyTaskRows } from "./answer-budget.js";
import { ErrorCode, isUserError } from "./errors.js";

describe("an answer's budget for bulk task reads", () => {
  it("starts at 4 MiB and 10,000 rows, and each read sees what the reads before it left", async () => {
    const budget = new AnswerBudget();
    const seen: Array<{ bytes: number; rows: number }> = [];
    const read = (bytes: number, rows: number) => (left: { bytes: number; rows: number }) => {
      seen.push(left);
      return Promise.resolve({ value: rows, used: { bytes, rows } });
    };
    // Started together (aliases), they still run one after the other.
    const values = await Promise.all([budget.spend(read(3_000_000, 4_000)), budget.spend(read(3_000_000, 7_000)), budget.spend(read(0, 0))]);
    expect(values).toEqual([4_000, 7_000, 0]);
    expect(seen).toEqual([
      { bytes: ANSWER_BODY_BYTES, rows: ANSWER_TASK_ROWS },
      { bytes: ANSWER_BODY_BYTES - 3_000_000, rows: ANSWER_TASK_ROWS - 4_000 },
      { bytes: 0, rows: 0 },
    ]);
  });

  it("a refused read spends nothing and does not stop the reads after it", async () => {
    const budget = new AnswerBudget({ bytes: 100, rows: 10 });
    await expect(budget.spend(() => Promise.reject(tooManyTaskRows("These workflows", 11, 10)))).rejects.toMatchObject({ code: ErrorCode.BAD_USER_INPUT });
    await expect(budget.spend((left) => Promise.resolve({ value: left, used: { bytes: 1, rows: 1 } }))).resolves.toEqual({ bytes: 100, rows: 10 });
    expect(budget.left).toEqual({ bytes: 99, rows: 9 });
  });

  it("tells the caller how much and what to do", () => {
    const error = tooManyTaskRows("These workflows", 10_001, ANSWER_TASK_ROWS);
    expect(error.message).toContain("at most 10,000");
    expect(error.message).toContain("ask for fewer");
    expect(tooManyTaskRows("These schedules' runs", 600, 500).message).toContain("9,500 read already");
    expect(tooManyTaskRows("This schedule's runs", 600, 500, "page them with tasks(filter: { scheduleId })").message).toMatch(/at once, or page them with tasks\(filter/);
  });
});

describe("WITHHELD_BODY", () => {
  it("is a frozen BAD_USER_INPUT user error that says how to read the task", () => {
    expect(isUserError(WITHHELD_BODY)).toBe(true);
    expect(WITHHELD_BODY).toBeInstanceOf(WithheldBodyError);
    expect(WITHHELD_BODY.code).toBe(ErrorCode.BAD_USER_INPUT);
    expect(WITHHELD_BODY.message).toContain("task(id)");
    expect(WITHHELD_BODY.extensions).toMatchObject({ reason: "ANSWER_BODY_BYTES", limitBytes: ANSWER_BODY_BYTES });
    expect(Object.isFrozen(WITHHELD_BODY)).toBe(true);
    expect(Object.isFrozen(WITHHELD_BODY.extensions)).toBe(true);
  });

  it("can never be written as data: serialising it throws instead of writing {}", () => {
    expect(() => JSON.stringify({ taskId: "task_1", payload: WITHHELD_BODY })).toThrow(/withheld/);
    expect(() => JSON.stringify(WITHHELD_BODY)).toThrow(TypeError);
  });
});
