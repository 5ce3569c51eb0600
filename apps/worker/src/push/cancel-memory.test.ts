import { describe, expect, it } from "vitest";
import { CancelMemory } from "./cancel-memory.js";

describe("CancelMemory", () => {
  it("answers true once for a cancellation heard within 30 s, and false for others", () => {
    let now = 1_000_000;
    const memory = new CancelMemory(() => now);
    memory.remember("task_a");
    now += 29_000;
    expect(memory.take("task_b")).toBe(false);
    expect(memory.take("task_a")).toBe(true);
    expect(memory.take("task_a")).toBe(false);
  });

  it("forgets cancellations older than 30 s, pruning them as new ones arrive", () => {
    let now = 0;
    const memory = new CancelMemory(() => now);
    memory.remember("task_old");
    now += 31_000;
    expect(memory.take("task_old")).toBe(false);
    memory.remember("task_x");
    now += 31_000;
    memory.remember("task_y");
    expect(memory.size).toBe(1);
    expect(memory.take("task_y")).toBe(true);
  });

  it("keeps at most 10,000 ids, dropping the oldest", () => {
    const memory = new CancelMemory(() => 0);
    for (let i = 0; i <= 10_000; i++) memory.remember(`task_${i}`);
    expect(memory.size).toBe(10_000);
    expect(memory.take("task_0")).toBe(false);
    expect(memory.take("task_10000")).toBe(true);
  });
});
