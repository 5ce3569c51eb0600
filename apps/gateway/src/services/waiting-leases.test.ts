import { describe, expect, it } from "vitest";
import { WaitingLeases } from "./waiting-leases.js";

const task = (id: string, queueId = "q1") => ({ id, queueId });

describe("WaitingLeases", () => {
  it("hands tasks to the longest waiting call first, each up to its capacity, and answers the rest", () => {
    const handed: number[] = [];
    const waiting = new WaitingLeases((n) => handed.push(n));
    const first = waiting.join("q1", 2);
    const second = waiting.join("q1", 1);
    const left = waiting.offer([task("a"), task("b"), task("c"), task("d")]);
    expect(left.map((t) => t.id)).toEqual(["d"]);
    expect(first.signal.aborted && second.signal.aborted).toBe(true);
    expect(first.leave()).toEqual(["a", "b"]);
    expect(second.leave()).toEqual(["c"]);
    expect(handed).toEqual([3]);
    // Both were handed their share and left the line: nothing more reaches them.
    expect(waiting.offer([task("e")]).map((t) => t.id)).toEqual(["e"]);
  });

  it("hands only to calls of the task's own queue and keeps each queue's order", () => {
    const waiting = new WaitingLeases();
    const other = waiting.join("q2", 10);
    const left = waiting.offer([task("a"), task("b", "q2"), task("c"), task("d", "q2")]);
    expect(left.map((t) => t.id)).toEqual(["a", "c"]);
    expect(other.leave()).toEqual(["b", "d"]);
  });

  it("a call that left before an offer gets nothing and is not woken; the next in line is", () => {
    const waiting = new WaitingLeases();
    const gone = waiting.join("q1", 5);
    const next = waiting.join("q1", 5);
    expect(gone.leave()).toBeNull();
    expect(waiting.offer([task("a")])).toEqual([]);
    expect(gone.signal.aborted).toBe(false);
    expect(next.leave()).toEqual(["a"]);
    // Leaving twice, or after the line emptied, changes nothing.
    expect(gone.leave()).toBeNull();
    expect(waiting.offer([task("b")]).map((t) => t.id)).toEqual(["b"]);
  });

  it("reports no hand-off when nobody waits", () => {
    const handed: number[] = [];
    const waiting = new WaitingLeases((n) => handed.push(n));
    expect(waiting.offer([task("a")]).map((t) => t.id)).toEqual(["a"]);
    expect(waiting.offer([])).toEqual([]);
    expect(handed).toEqual([]);
  });
});
