import { NotFoundError } from "@tasklane/core";
import type { SubmitResult, TaskInsert, TaskRecord } from "@tasklane/db";
import { describe, expect, it } from "vitest";
import { SubmitCoalescer } from "./submit-coalescer.js";

interface Call {
  tenantId: string;
  actor: string;
  types: string[];
  repeatBodyBytes: number;
  finish: () => void;
  fail: (error: unknown) => void;
}

/** A run whose calls are recorded and finish only when the test says so. */
function controlledRun(refuse?: (types: string[]) => Error | undefined) {
  const calls: Call[] = [];
  const run = (tenantId: string, specs: TaskInsert[], actor: string, repeatBodyBytes: number) =>
    new Promise<SubmitResult>((resolve, reject) => {
      const types = specs.map((s) => s.type);
      calls.push({
        tenantId,
        actor,
        types,
        repeatBodyBytes,
        finish: () => {
          const refusal = refuse?.(types);
          if (refusal) reject(refusal);
          else {
            // A type starting "again" stands for a repeat of a key whose task holds the trace `tp-<type>`.
            const repeatOf = types.map((type) => (type.startsWith("again") ? { traceParent: `tp-${type}`, bodyBytes: 7 } : null));
            const tasks = types.map((type) => ({ id: `task_${type}`, type }) as unknown as TaskRecord);
            resolve({ tasks, dispatch: [], created: repeatOf.filter((r) => r === null).length, repeatOf });
          }
        },
        fail: reject,
      });
    });
  return { calls, run };
}

const spec = (type: string) => ({ type }) as unknown as TaskInsert;
const settle = () => new Promise((r) => setImmediate(r));

describe("SubmitCoalescer", () => {
  it("sends a lone submission at once, unmerged", async () => {
    const { calls, run } = controlledRun();
    const coalescer = new SubmitCoalescer(run, { maxBatch: 500, maxInFlight: 1 });
    const pending = coalescer.submit("ten_a", [spec("a")], "key:1");
    expect(calls.map((c) => c.types)).toEqual([["a"]]);
    calls[0]?.finish();
    expect((await pending).tasks.map((t) => t.type)).toEqual(["a"]);
  });

  it("merges what arrives while the lane is busy, and hands each request its own tasks in order", async () => {
    const { calls, run } = controlledRun();
    const coalescer = new SubmitCoalescer(run, { maxBatch: 500, maxInFlight: 1 });
    const first = coalescer.submit("ten_a", [spec("a")], "key:1");
    const second = coalescer.submit("ten_a", [spec("b"), spec("c")], "key:1");
    const third = coalescer.submit("ten_a", [spec("d")], "key:1");
    expect(calls).toHaveLength(1);
    calls[0]?.finish();
    await first;
    await settle();
    expect(calls.map((c) => c.types)).toEqual([["a"], ["b", "c", "d"]]);
    calls[1]?.finish();
    expect((await second).tasks.map((t) => t.type)).toEqual(["b", "c"]);
    expect((await third).tasks.map((t) => t.type)).toEqual(["d"]);
  });

  it("hands each request of a merged batch its own repeats and created count", async () => {
    const { calls, run } = controlledRun();
    const coalescer = new SubmitCoalescer(run, { maxBatch: 500, maxInFlight: 1 });
    const first = coalescer.submit("ten_a", [spec("a")], "key:1");
    const second = coalescer.submit("ten_a", [spec("b"), spec("again-c")], "key:1");
    const third = coalescer.submit("ten_a", [spec("again-d")], "key:1");
    const fourth = coalescer.submit("ten_a", [spec("e")], "key:1");
    calls[0]?.finish();
    await first;
    await settle();
    expect(calls.map((c) => c.types)).toEqual([["a"], ["b", "again-c", "again-d", "e"]]);
    calls[1]?.finish();
    const shares = await Promise.all([second, third, fourth]);
    expect(shares.map((r) => [r.created, r.repeatOf])).toEqual([
      [1, [null, { traceParent: "tp-again-c", bodyBytes: 7 }]],
      [0, [{ traceParent: "tp-again-d", bodyBytes: 7 }]],
      [1, [null]],
    ]);
  });

  it("bounds a merged batch's repeated bodies by the least any of its requests has left of its answer", async () => {
    const { calls, run } = controlledRun();
    const coalescer = new SubmitCoalescer(run, { maxBatch: 500, maxInFlight: 1 });
    const first = coalescer.submit("ten_a", [spec("a")], "key:1", 100);
    void coalescer.submit("ten_a", [spec("b")], "key:1", 300);
    void coalescer.submit("ten_a", [spec("c")], "key:1", 200);
    void coalescer.submit("ten_a", [spec("d")], "key:1");
    calls[0]?.finish();
    await first;
    await settle();
    expect(calls.map((c) => [c.types, c.repeatBodyBytes])).toEqual([
      [["a"], 100],
      [["b", "c", "d"], 200],
    ]);
  });

  it("never merges different tenants or actors", async () => {
    const { calls, run } = controlledRun();
    const coalescer = new SubmitCoalescer(run, { maxBatch: 500, maxInFlight: 1 });
    void coalescer.submit("ten_a", [spec("a")], "key:1");
    void coalescer.submit("ten_b", [spec("b")], "key:1");
    void coalescer.submit("ten_a", [spec("c")], "key:2");
    expect(calls.map((c) => [c.tenantId, c.actor, c.types])).toEqual([
      ["ten_a", "key:1", ["a"]],
      ["ten_b", "key:1", ["b"]],
      ["ten_a", "key:2", ["c"]],
    ]);
  });

  it("keeps a merged batch within maxBatch tasks", async () => {
    const { calls, run } = controlledRun();
    const coalescer = new SubmitCoalescer(run, { maxBatch: 3, maxInFlight: 1 });
    const all = [coalescer.submit("ten_a", [spec("a")], "k"), ...["b", "c", "d", "e"].map((t) => coalescer.submit("ten_a", [spec(t)], "k"))];
    calls[0]?.finish();
    await settle();
    expect(calls.map((c) => c.types)).toEqual([["a"], ["b", "c", "d"]]);
    calls[1]?.finish();
    await settle();
    expect(calls.map((c) => c.types)).toEqual([["a"], ["b", "c", "d"], ["e"]]);
    calls[2]?.finish();
    expect((await Promise.all(all)).map((r) => r.tasks.length)).toEqual([1, 1, 1, 1, 1]);
  });

  it("runs each request alone when the merged batch is refused, so only the culprit gets the error", async () => {
    const { calls, run } = controlledRun((types) => (types.includes("bad") ? new NotFoundError("Queue", "nope") : undefined));
    const coalescer = new SubmitCoalescer(run, { maxBatch: 500, maxInFlight: 1 });
    const first = coalescer.submit("ten_a", [spec("a")], "k");
    const good = coalescer.submit("ten_a", [spec("b")], "k");
    const bad = coalescer.submit("ten_a", [spec("bad")], "k");
    calls[0]?.finish();
    await first;
    await settle();
    calls[1]?.finish();
    await settle();
    // The merged call failed; the two requests went again on their own.
    expect(calls.map((c) => c.types)).toEqual([["a"], ["b", "bad"], ["b"], ["bad"]]);
    calls[2]?.finish();
    calls[3]?.finish();
    expect((await good).tasks.map((t) => t.type)).toEqual(["b"]);
    await expect(bad).rejects.toBeInstanceOf(NotFoundError);
  });

  it("fails every request of a batch on an untyped error, without running any of them again", async () => {
    const { calls, run } = controlledRun();
    const coalescer = new SubmitCoalescer(run, { maxBatch: 500, maxInFlight: 1 });
    const first = coalescer.submit("ten_a", [spec("a")], "k");
    const rest = [coalescer.submit("ten_a", [spec("b")], "k"), coalescer.submit("ten_a", [spec("c")], "k")];
    calls[0]?.finish();
    await first;
    await settle();
    calls[1]?.fail(new Error("connection terminated"));
    for (const r of rest) await expect(r).rejects.toThrow("connection terminated");
    expect(calls).toHaveLength(2);
  });
});
