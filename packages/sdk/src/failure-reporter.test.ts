import { afterEach, describe, expect, it, vi } from "vitest";
import { CompletionBatcher } from "./completion-batcher.js";
import { TasklaneError } from "./errors.js";
import { FailureReporter } from "./failure-reporter.js";
import { OutcomeHold } from "./outcome-hold.js";
import type { LeasesResource } from "./resources/leases.js";
import type { TaskCompletion } from "./types.js";

/** A gateway whose outcome calls fail with `down` while it is set, recording each call. */
function flakyLeases() {
  const state = { down: null as TasklaneError | null, fails: [] as string[], settles: [] as string[][] };
  const leases = {
    fail: async (taskId: string) => {
      state.fails.push(taskId);
      if (state.down) throw state.down;
      return { id: taskId };
    },
    settleMany: async (completions: TaskCompletion[]) => {
      state.settles.push(completions.map((c) => c.taskId));
      if (state.down) throw state.down;
      return completions.map((c) => ({ taskId: c.taskId, accepted: true, code: null, message: null }));
    },
  } as unknown as LeasesResource;
  return { state, leases };
}

const overloaded = () => new TasklaneError("OVERLOADED", "the database is unavailable", { operation: "failTask", retryAfterSeconds: 2 });

describe("FailureReporter", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("holds a failure while the gateway answers OVERLOADED, sends it again after its Retry-After, and records it once it answers", async () => {
    vi.useFakeTimers();
    const { state, leases } = flakyLeases();
    state.down = overloaded();
    const failures = new FailureReporter(leases);
    let recorded = false;
    const done = failures.fail("task_1", "lt_1_1", "boom", true, Date.now() + 60_000).then(() => (recorded = true));
    await vi.advanceTimersByTimeAsync(1);
    expect(state.fails).toEqual(["task_1"]);
    expect(failures.heldCount).toBe(1);
    await vi.advanceTimersByTimeAsync(1_990);
    expect(state.fails).toHaveLength(1);
    state.down = null;
    await vi.advanceTimersByTimeAsync(20);
    await done;
    expect(recorded).toBe(true);
    expect(state.fails).toEqual(["task_1", "task_1"]);
    expect(failures.heldCount).toBe(0);
  });

  it("rejects a held failure once its lease is over, and never holds a definite answer", async () => {
    vi.useFakeTimers();
    const { state, leases } = flakyLeases();
    state.down = new TasklaneError("NETWORK_ERROR", "connect ECONNREFUSED", { operation: "failTask" });
    const failures = new FailureReporter(leases, new OutcomeHold({ random: () => 0 }));
    const t0 = Date.now();
    const outcome = failures.fail("task_1", "lt_1_1", "boom", true, t0 + 1_000).then(
      () => "recorded",
      (e: TasklaneError) => `${e.code} after ${Date.now() - t0}`,
    );
    await vi.advanceTimersByTimeAsync(3_000);
    expect(await outcome).toMatch(/^NETWORK_ERROR after (\d+)$/);
    expect(Number((await outcome).split(" after ")[1])).toBeGreaterThanOrEqual(1_000);
    expect(state.fails.length).toBeGreaterThanOrEqual(3);
    expect(failures.heldCount).toBe(0);

    state.down = new TasklaneError("CONFLICT", "lease token is stale", { operation: "failTask" });
    const calls = state.fails.length;
    const refused = failures.fail("task_2", "lt_1_2", "boom", true, Date.now() + 60_000).catch((e: TasklaneError) => e.code);
    await vi.advanceTimersByTimeAsync(1);
    expect(await refused).toBe("CONFLICT");
    expect(state.fails.length).toBe(calls + 1);
    expect(failures.heldCount).toBe(0);
  });

  it("shares one hold with the completions: one cap for both, and a completion that goes through sends the held failures at once", async () => {
    vi.useFakeTimers();
    const { state, leases } = flakyLeases();
    state.down = overloaded();
    const hold = new OutcomeHold({ maxHeld: 2 });
    const completions = new CompletionBatcher(leases, 100, 1, hold);
    const failures = new FailureReporter(leases, hold);
    const far = Date.now() + 60_000;
    const completed = completions.complete({ taskId: "task_c", leaseToken: "lt_1_c", result: 1 }, far);
    // Its batch window (1 ms) over, its call fails and it is held.
    await vi.advanceTimersByTimeAsync(2);
    const failed = failures.fail("task_f", "lt_1_f", "boom", true, far);
    const overCap = failures.fail("task_x", "lt_1_x", "boom", true, far).catch((e: TasklaneError) => e.code);
    await vi.advanceTimersByTimeAsync(1);
    expect(await overCap).toBe("OVERLOADED");
    expect(hold.heldCount).toBe(2);
    expect([completions.heldCount, failures.heldCount]).toEqual([1, 1]);
    // The gateway answers a fresh call well before the held ones' Retry-After (2 s) is over.
    state.down = null;
    const fresh = completions.complete({ taskId: "task_d", leaseToken: "lt_1_d", result: 1 }, far);
    await vi.advanceTimersByTimeAsync(5);
    await Promise.all([fresh, completed, failed]);
    expect(Date.now() - (far - 60_000)).toBeLessThan(2_000); // well before the held ones' Retry-After
    expect(state.fails).toEqual(["task_f", "task_x", "task_f"]);
    expect(state.settles).toEqual([["task_c"], ["task_d"], ["task_c"]]);
    expect(hold.heldCount).toBe(0);
  });
});
