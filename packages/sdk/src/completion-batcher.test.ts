import { afterEach, describe, expect, it, vi } from "vitest";
import { CompletionBatcher } from "./completion-batcher.js";
import { TasklaneError } from "./errors.js";
import { OutcomeHold } from "./outcome-hold.js";
import type { LeasesResource } from "./resources/leases.js";
import type { TaskCompletion } from "./types.js";

/** A LeasesResource whose settleMany records each call and accepts every outcome. */
function recordingLeases() {
  const calls: TaskCompletion[][] = [];
  const leases = {
    settleMany: async (completions: TaskCompletion[]) => {
      calls.push(completions);
      return completions.map((c) => ({ taskId: c.taskId, accepted: true, code: null, message: null }));
    },
  } as unknown as LeasesResource;
  return { calls, leases };
}

const completion = (n: number): TaskCompletion => ({ taskId: `task_${n}`, leaseToken: `lt_1_${n}`, result: n });
/** A lease that outlasts the test. */
const FAR = Number.POSITIVE_INFINITY;

describe("CompletionBatcher", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("sends outcomes that arrive within 10 ms of the first in one call, and none before then", async () => {
    vi.useFakeTimers();
    const { calls, leases } = recordingLeases();
    const batcher = new CompletionBatcher(leases);
    const recorded = [batcher.complete(completion(1), FAR)];
    await vi.advanceTimersByTimeAsync(4);
    recorded.push(batcher.complete(completion(2), FAR));
    await vi.advanceTimersByTimeAsync(4);
    recorded.push(batcher.complete(completion(3), FAR));
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    await Promise.all(recorded);
    expect(calls.map((c) => c.map((x) => x.taskId))).toEqual([["task_1", "task_2", "task_3"]]);
    // The next outcome opens a batch of its own.
    const later = batcher.complete(completion(4), FAR);
    await vi.advanceTimersByTimeAsync(10);
    await later;
    expect(calls.map((c) => c.length)).toEqual([3, 1]);
  });

  it("sends a full batch at once, without waiting out the window", async () => {
    vi.useFakeTimers();
    const { calls, leases } = recordingLeases();
    const batcher = new CompletionBatcher(leases, 100);
    const recorded = Array.from({ length: 101 }, (_, i) => batcher.complete(completion(i), FAR));
    await vi.advanceTimersByTimeAsync(0);
    expect(calls.map((c) => c.length)).toEqual([100]);
    await vi.advanceTimersByTimeAsync(10);
    await Promise.all(recorded);
    expect(calls.map((c) => c.length)).toEqual([100, 1]);
  });

  it("records the other outcomes of a batch refused for one result, and refuses only that one", async () => {
    const calls: string[][] = [];
    // As the gateway does: the whole call is refused when one item's variables fail its checks.
    const leases = {
      settleMany: async (completions: TaskCompletion[]) => {
        calls.push(completions.map((c) => c.taskId));
        if (completions.some((c) => c.taskId === "task_bad")) {
          throw new TasklaneError("BAD_USER_INPUT", "Variable \"$completions\" got invalid value", { operation: "completeTasks" });
        }
        return completions.map((c) => ({ taskId: c.taskId, accepted: true, code: null, message: null }));
      },
    } as unknown as LeasesResource;
    const batcher = new CompletionBatcher(leases, 100, 1);
    const outcomes = await Promise.allSettled([
      batcher.complete(completion(1), FAR),
      batcher.complete({ taskId: "task_bad", leaseToken: "lt_1_bad", result: "refused by the gateway" }, FAR),
      batcher.complete(completion(3), FAR),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect((outcomes[1] as PromiseRejectedResult).reason).toMatchObject({ code: "BAD_USER_INPUT" });
    expect(calls).toEqual([["task_1", "task_bad", "task_3"], ["task_1"], ["task_bad"], ["task_3"]]);
  });

  it("refuses a result JSON cannot carry before sending it: NaN and Infinity would arrive as null, a BigInt would fail the call", async () => {
    const { calls, leases } = recordingLeases();
    const batcher = new CompletionBatcher(leases, 100, 1);
    const outcomes = await Promise.allSettled([
      batcher.complete(completion(1), FAR),
      batcher.complete({ taskId: "task_nan", leaseToken: "lt_1_nan", result: { price: Number.NaN } }, FAR),
      batcher.complete({ taskId: "task_big", leaseToken: "lt_1_big", result: { n: 1n } }, FAR),
      batcher.complete(completion(4), FAR),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "rejected", "fulfilled"]);
    expect((outcomes[1] as PromiseRejectedResult).reason).toMatchObject({ code: "BAD_USER_INPUT", message: expect.stringContaining(".price is NaN") });
    expect((outcomes[2] as PromiseRejectedResult).reason).toMatchObject({ code: "BAD_USER_INPUT" });
    expect(calls.map((c) => c.map((x) => x.taskId))).toEqual([["task_1", "task_4"]]);
  });

  it("refuses a result holding text the gateway cannot store (or a function) alone, before it costs the batch a refused call", async () => {
    const { calls, leases } = recordingLeases();
    const batcher = new CompletionBatcher(leases, 100, 1);
    const outcomes = await Promise.allSettled([
      batcher.complete(completion(1), FAR),
      batcher.complete({ taskId: "task_nul", leaseToken: "lt_1_nul", result: { note: "x\u0000y" } }, FAR),
      batcher.complete({ taskId: "task_fn", leaseToken: "lt_1_fn", result: () => 1 }, FAR),
      batcher.complete(completion(4), FAR),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "rejected", "fulfilled"]);
    expect((outcomes[1] as PromiseRejectedResult).reason).toMatchObject({ code: "BAD_USER_INPUT", extensions: { fieldErrors: [{ path: "result.note" }] } });
    expect((outcomes[2] as PromiseRejectedResult).reason).toMatchObject({ code: "BAD_USER_INPUT" });
    expect(calls.map((c) => c.map((x) => x.taskId))).toEqual([["task_1", "task_4"]]);
  });

  it("holds outcomes while the gateway answers OVERLOADED, sends them again after its Retry-After, and records them once it answers", async () => {
    vi.useFakeTimers();
    const calls: string[][] = [];
    let overloaded = true;
    const leases = {
      settleMany: async (completions: TaskCompletion[]) => {
        calls.push(completions.map((c) => c.taskId));
        if (overloaded) throw new TasklaneError("OVERLOADED", "the database is unavailable", { operation: "completeTasks", retryAfterSeconds: 2 });
        return completions.map((c) => ({ taskId: c.taskId, accepted: true, code: null, message: null }));
      },
    } as unknown as LeasesResource;
    const batcher = new CompletionBatcher(leases, 100, 1);
    const settled: string[] = [];
    const recorded = [1, 2, 3].map((n) => batcher.complete(completion(n), Date.now() + 60_000).then(() => settled.push(`task_${n}`)));
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toHaveLength(1);
    expect(batcher.heldCount).toBe(3);
    // Retry-After: 2 s, nothing sooner.
    await vi.advanceTimersByTimeAsync(1_990);
    expect(calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(20);
    expect(calls).toHaveLength(2);
    overloaded = false;
    await vi.advanceTimersByTimeAsync(2_000);
    await Promise.all(recorded);
    expect(calls).toEqual([["task_1", "task_2", "task_3"], ["task_1", "task_2", "task_3"], ["task_1", "task_2", "task_3"]]);
    expect(settled).toEqual(["task_1", "task_2", "task_3"]);
    expect(batcher.heldCount).toBe(0);
  });

  it("rejects a held outcome once its lease is over, one past the cap at once, and never holds a definite answer", async () => {
    vi.useFakeTimers();
    const calls: string[][] = [];
    const leases = {
      settleMany: async (completions: TaskCompletion[]) => {
        calls.push(completions.map((c) => c.taskId));
        if (completions.some((c) => c.taskId === "task_gone")) throw new TasklaneError("CONFLICT", "lease token is stale", { operation: "completeTasks" });
        throw new TasklaneError("NETWORK_ERROR", "connect ECONNREFUSED", { operation: "completeTasks" });
      },
    } as unknown as LeasesResource;
    const batcher = new CompletionBatcher(leases, 100, 1, new OutcomeHold({ maxHeld: 2, random: () => 0 }));
    const outcomes = [
      batcher.complete(completion(1), Date.now() + 1_000),
      batcher.complete(completion(2), Date.now() + 1_000),
      batcher.complete(completion(3), Date.now() + 1_000),
    ].map((p) => p.then(() => "recorded", (e: TasklaneError) => `${e.code} at ${Date.now()}`));
    const t0 = Date.now();
    await vi.advanceTimersByTimeAsync(1);
    // Cap 2: the third goes at once.
    expect(await outcomes[2]).toBe(`NETWORK_ERROR at ${t0 + 1}`);
    // Backoff without Retry-After, jitter 0: 125, 250, 500 ms ... then the lease is over.
    await vi.advanceTimersByTimeAsync(2_000);
    const [first, second] = await Promise.all(outcomes.slice(0, 2));
    expect(first).toMatch(/^NETWORK_ERROR at /);
    expect(Number(first!.split(" at ")[1]) - t0).toBeGreaterThanOrEqual(1_000);
    expect(second).toBe(first);
    expect(calls.length).toBeGreaterThanOrEqual(4);
    expect(batcher.heldCount).toBe(0);

    const gone = batcher.complete({ taskId: "task_gone", leaseToken: "lt_1_gone", result: 1 }, Date.now() + 60_000);
    const refused = gone.catch((e: TasklaneError) => e.code);
    await vi.advanceTimersByTimeAsync(1);
    expect(await refused).toBe("CONFLICT");
    expect(batcher.heldCount).toBe(0);
  });

  it("rejects a refused item with the contract's code, in extensions too; an unknown code or no answer is INTERNAL_SERVER_ERROR", async () => {
    const leases = {
      settleMany: async () => [
        { taskId: "task_1", accepted: false, code: "CONFLICT", message: "Lease is no longer held" },
        { taskId: "task_2", accepted: false, code: "INTERNAL", message: null },
      ],
    } as unknown as LeasesResource;
    const batcher = new CompletionBatcher(leases, 3, 0);
    const errors = await Promise.all([1, 2, 3].map((n) => batcher.complete(completion(n), FAR).then(() => undefined, (e: unknown) => e as TasklaneError)));
    expect(errors.map((e) => [e?.code, e?.extensions.code, e?.message])).toEqual([
      ["CONFLICT", "CONFLICT", "Lease is no longer held"],
      ["INTERNAL_SERVER_ERROR", "INTERNAL_SERVER_ERROR", "completeTasks refused this task (INTERNAL)"],
      ["INTERNAL_SERVER_ERROR", "INTERNAL_SERVER_ERROR", "completeTasks gave no answer for this task"],
    ]);
  });
});
