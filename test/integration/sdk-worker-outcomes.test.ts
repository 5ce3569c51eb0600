/**
 * What the SDK Worker reports for handlers that throw or return values the
 * gateway cannot store or JSON cannot carry, against the real gateway on real
 * Postgres and Redis. Every task allows one attempt or fails non-retryably, so
 * no scheduler is needed: each outcome is the Worker's own report, and a
 * report the gateway refused leaves the task RUNNING (which the test sees).
 */
import { NonRetryableError, TasklaneClient, Worker, type TaskWithAttempts, type WorkerErrorContext } from "@tasklane/sdk";
import { afterAll, describe, expect, it } from "vitest";
import { useGateway } from "../helpers/gateway-fixture.js";
import { createTenant } from "../helpers/platform.js";

describe("SDK Worker: outcomes the gateway could not store", () => {
  const platform = useGateway();
  const workers: Worker[] = [];

  afterAll(async () => {
    await Promise.all(workers.map((w) => w.stop({ graceMs: 1_000 })));
  });

  /**
   * Runs one task per case on a fresh tenant's Worker and answers each task once
   * it has left RUNNING, or once the Worker reported that its outcome was
   * refused (then the task is still RUNNING, as QA saw until its lease expired).
   */
  async function runCases(cases: Record<string, () => unknown>, maxAttempts = 1) {
    const { apiKey } = await createTenant(platform.gateway);
    const client = new TasklaneClient({ url: platform.gateway.url, apiKey });
    const errors: Array<{ error: unknown; context: WorkerErrorContext }> = [];
    const worker = new Worker({
      client,
      queue: "default",
      concurrency: 20,
      pollWaitSeconds: 1,
      onError: (error, context) => errors.push({ error, context }),
      handler: (task) => (cases[task.type] as () => unknown)(),
    });
    workers.push(worker);
    const ids = new Map<string, string>();
    for (const type of Object.keys(cases)) ids.set(type, (await client.tasks.submit({ type, maxAttempts })).id);
    await worker.start();
    const reported = (id: string) => errors.some((e) => "taskId" in e.context && e.context.taskId === id);
    const settled = new Map<string, TaskWithAttempts>();
    const deadline = Date.now() + 30_000;
    while (settled.size < ids.size && Date.now() < deadline) {
      for (const [type, id] of ids) {
        if (settled.has(type)) continue;
        const task = await client.tasks.get(id);
        if (task !== null && (task.status !== "RUNNING" && task.status !== "QUEUED" ? true : reported(id))) settled.set(type, task);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    await worker.stop({ graceMs: 2_000 });
    return { settled, errors };
  }

  it("a handler's error with NUL, an unpaired surrogate or a pair at the 8,192-character cut is stored cleaned, not refused", async () => {
    const long = "a".repeat(8191);
    const { settled, errors } = await runCases({
      nul: () => {
        throw new Error("bad\u0000byte");
      },
      lone: () => {
        throw new Error("half \ud800 pair");
      },
      splitEmoji: () => {
        throw new Error(`${long}\u{1F600}tail`);
      },
      nonRetryableNul: () => {
        throw new NonRetryableError("nr\u0000");
      },
      nulString: () => {
        throw "plain\u0000string";
      },
    });
    expect(errors).toEqual([]);
    expect(Object.fromEntries([...settled].map(([type, t]) => [type, { status: t.status, lastError: t.lastError, outcomes: t.attemptHistory.map((a) => a.outcome) }]))).toEqual({
      nul: { status: "DEAD", lastError: "bad\uFFFDbyte", outcomes: ["FAILED"] },
      lone: { status: "DEAD", lastError: "half \uFFFD pair", outcomes: ["FAILED"] },
      // Cut before the pair, never through it: 8,191 characters, all of them whole.
      splitEmoji: { status: "DEAD", lastError: long, outcomes: ["FAILED"] },
      nonRetryableNul: { status: "DEAD", lastError: "nr\uFFFD", outcomes: ["FAILED"] },
      nulString: { status: "DEAD", lastError: "plain\uFFFDstring", outcomes: ["FAILED"] },
    });
  });

  it("a handler returning a function, a symbol or a Map fails non-retryably, saying why; toJSON, undefined and nested functions keep JSON's meaning", async () => {
    class Money {
      constructor(readonly cents: number) {}
      toJSON() {
        return { cents: this.cents };
      }
    }
    const { settled, errors } = await runCases(
      {
        fn: () => () => 1,
        symbol: () => Symbol("s"),
        map: () => new Map([["a", 1]]),
        nulString: () => "x\u0000y",
        date: () => new Date(0),
        money: () => new Money(5),
        undef: () => undefined,
        nestedFn: () => ({ a: 1, f: () => 1 }),
      },
      3,
    );
    expect(errors).toEqual([]);
    const seen = Object.fromEntries([...settled].map(([type, t]) => [type, { status: t.status, attempts: t.attempts, result: t.result, lastError: t.lastError }]));
    expect(seen).toEqual({
      fn: { status: "DEAD", attempts: 1, result: null, lastError: expect.stringContaining("result must be JSON: it is a function, which JSON drops") },
      symbol: { status: "DEAD", attempts: 1, result: null, lastError: expect.stringContaining("it is a symbol") },
      map: { status: "DEAD", attempts: 1, result: null, lastError: expect.stringContaining("it is an instance of Map, which JSON encodes as {}") },
      nulString: { status: "DEAD", attempts: 1, result: null, lastError: expect.stringContaining("must not contain NUL (U+0000) or unpaired surrogate characters") },
      date: { status: "SUCCEEDED", attempts: 1, result: "1970-01-01T00:00:00.000Z", lastError: null },
      money: { status: "SUCCEEDED", attempts: 1, result: { cents: 5 }, lastError: null },
      undef: { status: "SUCCEEDED", attempts: 1, result: null, lastError: null },
      nestedFn: { status: "SUCCEEDED", attempts: 1, result: { a: 1 }, lastError: null },
    });
  });
});
