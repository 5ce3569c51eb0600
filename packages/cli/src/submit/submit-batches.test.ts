import { TasklaneError, type SubmitTaskInput } from "@tasklane/sdk";
import { describe, expect, it } from "vitest";
import { MAX_REFUSAL_WAIT_MS, SubmitStopped, refusalWaitMs, submitInBatches, type Refusal } from "./submit-batches.js";

const tasks = (n: number): SubmitTaskInput[] => Array.from({ length: n }, (_, i) => ({ type: `t${i}` }));

/** A send answering ids "id-<type>", or throwing the next scripted error first. */
function sender(failures: (TasklaneError | Error | undefined)[] = []) {
  const batches: string[][] = [];
  return {
    batches,
    async send(batch: SubmitTaskInput[]) {
      batches.push(batch.map((t) => t.type));
      const failure = failures.shift();
      if (failure) throw failure;
      return batch.map((t) => `id-${t.type}`);
    },
  };
}

const overloaded = (retryAfterSeconds?: number) => new TasklaneError("OVERLOADED", "Service overloaded, try again later", { retryAfterSeconds });

describe("submitInBatches", () => {
  it("sends batches of batchSize in order and answers every id in input order", async () => {
    const s = sender();
    const accepted: number[] = [];
    const ids = await submitInBatches(tasks(1_200), { batchSize: 500, retries: 0, send: s.send, wait: async () => {}, onAccepted: (n) => accepted.push(n) });
    expect(s.batches.map((b) => b.length)).toEqual([500, 500, 200]);
    expect(accepted).toEqual([500, 1_000, 1_200]);
    expect(ids).toHaveLength(1_200);
    expect(ids[0]).toBe("id-t0");
    expect(ids[1_199]).toBe("id-t1199");
  });

  it("sends a refused batch again after its Retry-After, up to `retries` times", async () => {
    const s = sender([undefined, overloaded(2), new TasklaneError("RATE_LIMITED", "Rate limit exceeded", { retryAfterSeconds: 0.5 })]);
    const waits: number[] = [];
    const refusals: Refusal[] = [];
    const ids = await submitInBatches(tasks(30), {
      batchSize: 10,
      retries: 2,
      send: s.send,
      wait: async (ms) => void waits.push(ms),
      onRefused: (r) => refusals.push(r),
    });
    expect(ids).toHaveLength(30);
    expect(s.batches.map((b) => b[0])).toEqual(["t0", "t10", "t10", "t10", "t20"]);
    expect(waits).toEqual([2_000, 500]);
    expect(refusals.map((r) => [r.error.code, r.retry, r.from])).toEqual([
      ["OVERLOADED", 1, 10],
      ["RATE_LIMITED", 2, 10],
    ]);
  });

  it("stops when the retries are spent, saying how many were accepted and that the refused batch was not", async () => {
    const s = sender([undefined, overloaded(1), overloaded(1), overloaded(1)]);
    const stopped = await submitInBatches(tasks(25), { batchSize: 10, retries: 2, send: s.send, wait: async () => {} }).catch((e: unknown) => e);
    expect(stopped).toBeInstanceOf(SubmitStopped);
    const { accepted, from, to, outcomeUnknown, ids, cause } = stopped as SubmitStopped;
    expect({ accepted, from, to, outcomeUnknown }).toEqual({ accepted: 10, from: 10, to: 20, outcomeUnknown: false });
    expect(ids).toHaveLength(10);
    expect((cause as TasklaneError).code).toBe("OVERLOADED");
    expect(s.batches).toHaveLength(4);
  });

  it("never retries a definite refusal, and marks a failure without an answer as possibly accepted", async () => {
    const quota = await submitInBatches(tasks(5), { batchSize: 2, retries: 5, send: sender([new TasklaneError("QUOTA_EXCEEDED", "quota")]).send, wait: async () => {} }).catch((e: unknown) => e);
    expect(quota).toMatchObject({ accepted: 0, from: 0, to: 2, outcomeUnknown: false });

    const timeout = await submitInBatches(tasks(5), { batchSize: 2, retries: 5, send: sender([undefined, new TasklaneError("TIMEOUT", "no response")]).send, wait: async () => {} }).catch((e: unknown) => e);
    expect(timeout).toMatchObject({ accepted: 2, from: 2, to: 4, outcomeUnknown: true });

    const bug = await submitInBatches(tasks(1), { batchSize: 2, retries: 5, send: sender([new Error("boom")]).send, wait: async () => {} }).catch((e: unknown) => e);
    expect(bug).toMatchObject({ accepted: 0, outcomeUnknown: true });
  });
});

describe("refusalWaitMs", () => {
  it("waits the Retry-After given; without one 1 s, 2 s, 4 s … up to 30 s; past the longest wait it gives up", () => {
    expect(refusalWaitMs(overloaded(3), 1)).toBe(3_000);
    expect(refusalWaitMs(overloaded(0), 4)).toBe(0);
    expect([1, 2, 3, 6, 10].map((n) => refusalWaitMs(overloaded(), n))).toEqual([1_000, 2_000, 4_000, 30_000, 30_000]);
    expect(refusalWaitMs(overloaded(MAX_REFUSAL_WAIT_MS / 1000 + 1), 1)).toBeNull();
  });
});
