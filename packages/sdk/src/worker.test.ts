import { afterEach, describe, expect, it } from "vitest";
import { TasklaneClient } from "./client.js";
import { NonRetryableError, TaskAbortedError, TasklaneError } from "./errors.js";
import { startFakeGateway, type FakeGateway } from "./test-support/fake-gateway.js";
import { FakePullQueue } from "./test-support/fake-pull-queue.js";
import type { TaskContext, TaskHandler, WorkerErrorContext } from "./worker-run.js";
import { Worker, type WorkerOptions } from "./worker.js";

let gateway: FakeGateway | undefined;
const workers: Worker[] = [];

afterEach(async () => {
  // A test that leaves a worker running fails here rather than leaking into the next one.
  const leaked = workers.filter((w) => w.state !== "stopped" && w.state !== "idle");
  await Promise.all(workers.map((w) => w.stop({ graceMs: 0 })));
  workers.length = 0;
  await gateway?.close();
  gateway = undefined;
  expect(leaked.map((w) => w.workerId)).toEqual([]);
});

interface Setup<TPayload, TResult> {
  fake: FakePullQueue;
  worker: Worker<TPayload, TResult>;
  errors: Array<{ error: unknown; context: WorkerErrorContext }>;
  gateway: FakeGateway;
}

async function setup<TPayload = unknown, TResult = unknown>(
  handler: TaskHandler<TPayload, TResult>,
  options: Partial<WorkerOptions<TPayload, TResult>> = {},
  fake = new FakePullQueue(),
): Promise<Setup<TPayload, TResult>> {
  gateway = await startFakeGateway(fake.responder);
  const errors: Setup<TPayload, TResult>["errors"] = [];
  const worker = new Worker<TPayload, TResult>({
    client: new TasklaneClient({ url: gateway.url, apiKey: "k", retry: { baseDelayMs: 1 } }),
    queue: "default",
    handler,
    workerId: "w-test",
    leaseSeconds: 2,
    heartbeatEverySeconds: 0.05,
    pollWaitSeconds: 0.2,
    onError: (error, context) => errors.push({ error, context }),
    ...options,
  } as WorkerOptions<TPayload, TResult>);
  workers.push(worker as Worker);
  return { fake, worker, errors, gateway };
}

async function until(check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const deferred = () => {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
};

describe("Worker", () => {
  it("leases, runs the handler and completes with its result", async () => {
    const seen: Array<{ payload: unknown; attempt: number; leaseToken: string }> = [];
    const { fake, worker, errors } = await setup<{ n: number }, { doubled: number }>((task, ctx) => {
      seen.push({ payload: task.payload, attempt: ctx.attempt, leaseToken: ctx.leaseToken });
      return { doubled: (task.payload?.n ?? 0) * 2 };
    });
    const ids = [fake.add({ n: 1 }), fake.add({ n: 2 }), fake.add({ n: 3 })];
    await worker.start();
    expect(worker.state).toBe("running");
    await until(() => ids.every((id) => fake.state(id).task.status === "SUCCEEDED"));
    await worker.stop();
    expect(ids.map((id) => fake.state(id).outcomes)).toEqual([
      [{ kind: "complete", result: { doubled: 2 } }],
      [{ kind: "complete", result: { doubled: 4 } }],
      [{ kind: "complete", result: { doubled: 6 } }],
    ]);
    expect(seen.map((s) => s.attempt)).toEqual([1, 1, 1]);
    expect(seen.every((s) => /^lt_1_task_\d+$/.test(s.leaseToken))).toBe(true);
    expect(fake.leaseRequests[0]).toEqual({ max: 10, leaseSeconds: 2, waitSeconds: 0.2, startAheadMs: 100 });
    expect(errors).toEqual([]);
  });

  it("reports NonRetryableError with retryable:false and other throws with retryable:true", async () => {
    const { fake, worker } = await setup((task) => {
      if (task.payload === "fatal") throw new NonRetryableError("card declined");
      throw new Error("upstream 502");
    });
    const fatal = fake.add("fatal");
    const flaky = fake.add("flaky", { maxAttempts: 1 });
    await worker.start();
    await until(() => fake.state(fatal).task.status === "DEAD" && fake.state(flaky).task.status === "DEAD");
    await worker.stop();
    expect(fake.state(fatal).outcomes).toEqual([{ kind: "fail", error: "card declined", retryable: false }]);
    expect(fake.state(flaky).outcomes).toEqual([{ kind: "fail", error: "upstream 502", retryable: true }]);
  });

  it("sends a thrown message the gateway could not store with NUL and unpaired surrogates as U+FFFD, cut before a pair", async () => {
    const long = "a".repeat(8191);
    const { fake, worker } = await setup((task) => {
      throw task.payload === "long" ? new NonRetryableError(`${long}\u{1F600}tail`) : new Error("bad\u0000byte \ud800 and \udc00");
    });
    const bad = fake.add("bad", { maxAttempts: 1 });
    const longOne = fake.add("long");
    await worker.start();
    await until(() => fake.state(bad).task.status === "DEAD" && fake.state(longOne).task.status === "DEAD");
    await worker.stop();
    expect(fake.state(bad).outcomes).toEqual([{ kind: "fail", error: "bad\uFFFDbyte \uFFFD and \uFFFD", retryable: true }]);
    expect(fake.state(longOne).outcomes).toEqual([{ kind: "fail", error: long, retryable: false }]);
  });

  it("when failTask refuses the message itself (BAD_USER_INPUT), fails the attempt with a message saying so instead of leaving it to the lease", async () => {
    const fake = new FakePullQueue();
    fake.refuseError = (error) => error.startsWith("a forbidden");
    const { worker, errors } = await setup((task) => {
      throw task.payload === "fatal" ? new NonRetryableError("a forbidden\u0000word") : new Error("a forbidden word");
    }, {}, fake);
    const fatal = fake.add("fatal");
    const flaky = fake.add("flaky", { maxAttempts: 1 });
    await worker.start();
    await until(() => fake.state(fatal).task.status === "DEAD" && fake.state(flaky).task.status === "DEAD");
    await worker.stop();
    expect(fake.state(fatal).outcomes).toEqual([
      { kind: "fail", error: `The handler's error could not be stored (error is not acceptable); it began "a forbidden\\u0000word"`, retryable: false },
    ]);
    expect(fake.state(flaky).outcomes).toEqual([
      { kind: "fail", error: `The handler's error could not be stored (error is not acceptable); it began "a forbidden word"`, retryable: true },
    ]);
    expect(errors).toEqual([]);
  });

  it("reports to onError when even the fallback failure is refused", async () => {
    const fake = new FakePullQueue();
    fake.refuseError = () => true;
    const { worker, errors } = await setup(() => {
      throw new Error("nope");
    }, {}, fake);
    const id = fake.add("x", { maxAttempts: 1 });
    await worker.start();
    await until(() => errors.length > 0);
    await worker.stop();
    expect(fake.state(id).task.status).toBe("RUNNING");
    expect(errors.map((e) => [e.context, (e.error as TasklaneError).code])).toEqual([[{ phase: "fail", taskId: id, refused: false }, "BAD_USER_INPUT"]]);
  });

  it("a retryable failure is leased again and ctx.attempt counts up", async () => {
    const attempts: number[] = [];
    const { fake, worker } = await setup((_task, ctx) => {
      attempts.push(ctx.attempt);
      if (ctx.attempt < 3) throw new Error(`try ${ctx.attempt}`);
      return "third time lucky";
    });
    const id = fake.add(null);
    await worker.start();
    await until(() => fake.state(id).task.status === "SUCCEEDED");
    await worker.stop();
    expect(attempts).toEqual([1, 2, 3]);
    expect(fake.state(id).outcomes.map((o) => o.kind)).toEqual(["fail", "fail", "complete"]);
  });

  it("aborts ctx.signal with reason 'cancelled' when a heartbeat says cancelRequested; the refused outcome goes to onError", async () => {
    const started = deferred();
    let reason: unknown;
    const { fake, worker, errors, gateway } = await setup(async (_task, ctx: TaskContext) => {
      started.resolve();
      await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve(), { once: true }));
      reason = ctx.signal.reason;
      throw ctx.signal.reason;
    });
    const id = fake.add(null);
    await worker.start();
    await started.promise;
    fake.cancel(id);
    await until(() => errors.length > 0);
    await worker.stop();
    expect(reason).toBeInstanceOf(TaskAbortedError);
    expect(reason).toMatchObject({ reason: "cancelled", taskId: id });
    expect(gateway.calls("Heartbeat").length).toBeGreaterThan(0);
    expect(errors).toHaveLength(1);
    expect(errors[0]?.context).toEqual({ phase: "fail", taskId: id, refused: true });
    expect(errors[0]?.error).toBeInstanceOf(TasklaneError);
    expect(fake.state(id).task.status).toBe("CANCELLED");
  });

  it("hands the handler a context whose properties are its own, so a spread keeps them, signal included", async () => {
    let keys: string[] = [];
    let spread: Partial<TaskContext> = {};
    const { fake, worker } = await setup((_task, ctx: TaskContext) => {
      keys = Object.keys(ctx).sort();
      spread = { ...ctx };
      return null;
    });
    const id = fake.add(null);
    await worker.start();
    await until(() => fake.state(id).task.status === "SUCCEEDED");
    await worker.stop();
    expect(keys).toEqual(["attempt", "heartbeat", "leaseToken", "signal", "workerId"]);
    expect(spread.signal).toBeInstanceOf(AbortSignal);
    expect(spread.signal?.aborted).toBe(false);
    expect(typeof spread.heartbeat).toBe("function");
  });

  it("gives a handler that first reads ctx.signal after a cancellation a signal already aborted; heartbeat works unbound", async () => {
    const started = deferred();
    const cancelled = deferred();
    let signal: AbortSignal | undefined;
    const { fake, worker } = await setup(async (_task, ctx: TaskContext) => {
      const { heartbeat, attempt, workerId } = ctx;
      expect({ attempt, workerId }).toEqual({ attempt: 1, workerId: "w-test" });
      started.resolve();
      await cancelled.promise;
      // This heartbeat carries the cancellation back; ctx.signal was never read before it.
      await heartbeat();
      signal = ctx.signal;
      return null;
    });
    const id = fake.add(null);
    await worker.start();
    await started.promise;
    fake.cancel(id);
    cancelled.resolve();
    await until(() => signal !== undefined);
    await worker.stop();
    expect(signal?.aborted).toBe(true);
    expect(signal?.reason).toBeInstanceOf(TaskAbortedError);
    expect(signal?.reason).toMatchObject({ reason: "cancelled", taskId: id });
  });

  it("aborts with 'lease-lost' when a heartbeat is refused, and reports no outcome", async () => {
    const started = deferred();
    let reason: unknown;
    const { fake, worker, errors, gateway } = await setup(async (_task, ctx) => {
      started.resolve();
      await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve(), { once: true }));
      reason = ctx.signal.reason;
      return "late result";
    });
    const id = fake.add(null);
    await worker.start();
    await started.promise;
    fake.leaseElsewhere(id);
    await until(() => reason !== undefined);
    await worker.stop();
    expect(reason).toMatchObject({ reason: "lease-lost" });
    expect(errors.map((e) => e.context)).toContainEqual({ phase: "heartbeat", taskId: id });
    expect(gateway.calls("CompleteTask")).toHaveLength(0);
    expect(gateway.calls("FailTask")).toHaveLength(0);
  });

  it("aborts with 'lease-lost' once the task's timeoutSeconds has run out, though every heartbeat got through", async () => {
    let reason: unknown;
    const { fake, worker, gateway } = await setup(async (_task, ctx) => {
      await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve(), { once: true }));
      reason = ctx.signal.reason;
      return "late result";
    });
    // The lease asked for is 2 s, and each heartbeat asks for 2 s more; the server holds none past the 1 s budget.
    const id = fake.add(null, { timeoutSeconds: 1 });
    await worker.start();
    await until(() => reason !== undefined);
    await worker.stop();
    expect(reason).toMatchObject({ reason: "lease-lost", cause: { message: "the task's timeoutSeconds (1) ran out" } });
    expect(gateway.calls("Heartbeat").length).toBeGreaterThan(0);
    // The server ends the attempt (TIMED_OUT): the late result is not sent.
    expect(fake.state(id).outcomes).toEqual([]);
    expect(gateway.calls("SettleTasks")).toHaveLength(0);
  });

  it("ctx.heartbeat() extends the lease on demand", async () => {
    const { fake, worker, gateway } = await setup(
      async (_task, ctx) => {
        await ctx.heartbeat();
        return "ok";
      },
      { heartbeatEverySeconds: 1 },
    );
    const id = fake.add(null);
    await worker.start();
    await until(() => fake.state(id).task.status === "SUCCEEDED");
    await worker.stop();
    expect(gateway.calls("Heartbeat")[0]?.variables).toMatchObject({ taskId: id, extendSeconds: 2 });
  });

  it("never runs more than `concurrency` handlers and leases only free slots", async () => {
    let running = 0;
    let peak = 0;
    const { fake, worker } = await setup(
      async () => {
        running++;
        peak = Math.max(peak, running);
        await new Promise((r) => setTimeout(r, 30));
        running--;
        return null;
      },
      { concurrency: 2 },
    );
    const ids = Array.from({ length: 6 }, (_, i) => fake.add(i));
    await worker.start();
    await until(() => ids.every((id) => fake.state(id).task.status === "SUCCEEDED"));
    await worker.stop();
    expect(peak).toBe(2);
    expect(Math.max(...fake.leaseRequests.map((r) => r.max))).toBe(2);
  });

  it("keeps up to maxConcurrentPolls lease calls in flight, together asking for no more than its free slots", async () => {
    for (const maxConcurrentPolls of [1, 3]) {
      const fake = new FakePullQueue();
      fake.leaseDelayMs = 30;
      let running = 0;
      let peakOccupied = 0;
      const { worker } = await setup<number>(
        async (ctx) => {
          running++;
          // Handlers end a few ms apart, so slots come free while a lease call is on its way.
          await new Promise((r) => setTimeout(r, ((ctx.payload ?? 0) % 4) * 5));
          running--;
          return null;
        },
        { concurrency: 4, maxConcurrentPolls },
        fake,
      );
      const sampler = setInterval(() => (peakOccupied = Math.max(peakOccupied, running)), 1);
      const ids = Array.from({ length: 40 }, (_, i) => fake.add(i));
      await worker.start();
      await until(() => ids.every((id) => fake.state(id).task.status === "SUCCEEDED"));
      await worker.stop();
      clearInterval(sampler);
      await gateway?.close();
      gateway = undefined;
      if (maxConcurrentPolls === 1) expect(fake.peakLeases.calls).toBe(1);
      else expect(fake.peakLeases.calls).toBeGreaterThan(1);
      expect(fake.peakLeases.calls).toBeLessThanOrEqual(maxConcurrentPolls);
      expect(fake.peakLeases.asked).toBeLessThanOrEqual(4);
      expect(peakOccupied).toBeLessThanOrEqual(4);
    }
  });

  it("starts a task leased ahead at its runAt on the server's clock: never before it, and not late by a slow answer's way back", async () => {
    const fake = new FakePullQueue();
    fake.clockOffsetMs = -10_000; // the server's clock is 10 s behind this process's
    const serverNow = () => Date.now() + fake.clockOffsetMs;
    const startedAt = new Map<string, number>();
    const { worker } = await setup((task) => void startedAt.set(task.id, serverNow()), { startAheadMs: 1_000 }, fake);
    await worker.start();
    const first = fake.add("first", { runAt: new Date(serverNow() + 300).toISOString() });
    await until(() => fake.state(first).task.status === "SUCCEEDED");
    // This answer takes 600 ms on its way back: holding startInMs from its arrival would start the task 600 ms late.
    fake.answerDelayMs = 600;
    const second = fake.add("second", { runAt: new Date(serverNow() + 900).toISOString() });
    await until(() => fake.state(second).task.status === "SUCCEEDED");
    await worker.stop();
    expect(fake.leaseRequests.every((r) => r.startAheadMs === 1_000)).toBe(true);
    for (const id of [first, second]) {
      const late = (startedAt.get(id) ?? Number.NaN) - Date.parse(fake.state(id).task.runAt);
      expect(late).toBeGreaterThanOrEqual(0);
      expect(late).toBeLessThan(300);
    }
  });

  it("polls with one call while the queue has no backlog (no answer came back full)", async () => {
    const fake = new FakePullQueue();
    fake.leaseDelayMs = 10;
    let handled = 0;
    const { worker } = await setup(
      () => {
        handled++;
        return null;
      },
      { concurrency: 4, maxConcurrentPolls: 3 },
      fake,
    );
    await worker.start();
    // Tasks trickle in one at a time: every answer holds fewer than the free slots asked for.
    for (let i = 0; i < 8; i++) {
      const id = fake.add(i);
      await until(() => fake.state(id).task.status === "SUCCEEDED");
    }
    await worker.stop();
    expect(handled).toBe(8);
    expect(fake.peakLeases.calls).toBe(1);
  });

  it("after a failed lease call one loop retries, not every one", async () => {
    const fake = new FakePullQueue();
    fake.leaseDelayMs = 10;
    const { worker, errors } = await setup(
      async () => {
        await new Promise((r) => setTimeout(r, 5));
        return null;
      },
      { concurrency: 2, maxConcurrentPolls: 3 },
      fake,
    );
    const ids = Array.from({ length: 200 }, (_, i) => fake.add(i));
    await worker.start();
    // A backlog: full answers, so every loop is leasing.
    await until(() => fake.peakLeases.calls > 1);
    fake.failLeases = true;
    const failedAt = Date.now();
    await until(() => errors.length >= 1);
    // Every loop's call that was on its way fails once; after that one loop retries, 500 ms later
    // and then 1 s after that. Three loops all retrying would have six failures by ~0.5 s.
    await new Promise((r) => setTimeout(r, Math.max(0, failedAt + 1_200 - Date.now())));
    expect(errors.length).toBeLessThanOrEqual(4);
    fake.failLeases = false;
    await until(() => ids.every((id) => fake.state(id).task.status === "SUCCEEDED"), 15_000);
    await worker.stop();
  });

  it("a finished handler frees its slot while its outcome is reported, with at most `concurrency` reports outstanding", async () => {
    const release = deferred();
    let handled = 0;
    const fake = new FakePullQueue();
    fake.holdCompletions = release.promise;
    const { worker } = await setup(
      () => {
        handled++;
        return null;
      },
      { concurrency: 1 },
      fake,
    );
    const ids = Array.from({ length: 3 }, (_, i) => fake.add(i));
    await worker.start();
    // The second task runs while the first one's report is held; the third waits for a report.
    await until(() => handled === 2);
    await new Promise((r) => setTimeout(r, 100));
    expect(handled).toBe(2);
    expect(ids.map((id) => fake.state(id).outcomes.length)).toEqual([0, 0, 0]);
    expect(worker.activeTasks).toBe(2);
    release.resolve();
    await until(() => ids.every((id) => fake.state(id).task.status === "SUCCEEDED"));
    await worker.stop();
    expect(handled).toBe(3);
  });

  it("stop() starts no lease call, lets the one in flight answer, and waits for in-flight handlers and their reports", async () => {
    const started = deferred();
    const { fake, worker, gateway } = await setup(async () => {
      started.resolve();
      await new Promise((r) => setTimeout(r, 150));
      return "done";
    });
    const id = fake.add(null);
    await worker.start();
    await started.promise;
    const leaseCallsAtStop = gateway.calls("LeaseTasks").length;
    await worker.stop();
    expect(worker.state).toBe("stopped");
    expect(fake.state(id).outcomes).toEqual([{ kind: "complete", result: "done" }]);
    // At most the call already on its way when stop() began, and none after.
    const callsAfterStop = gateway.calls("LeaseTasks").length;
    expect(callsAfterStop).toBeLessThanOrEqual(leaseCallsAtStop + 1);
    await new Promise((r) => setTimeout(r, 300));
    expect(gateway.calls("LeaseTasks").length).toBe(callsAfterStop);
    expect(worker.activeTasks).toBe(0);
  });

  it("stop() runs a lease answered a moment after it began: the call was on its way, and its tasks were leased", async () => {
    const fake = new FakePullQueue();
    fake.leaseDelayMs = 150;
    const { worker } = await setup(async () => "ran", {}, fake);
    await worker.start();
    // The first lease call is in flight (the gateway takes 150 ms); the task arrives, then stop() begins.
    const id = fake.add(null);
    await new Promise((r) => setTimeout(r, 20));
    await worker.stop({ graceMs: 3_000 });
    expect(fake.state(id).task.status).toBe("SUCCEEDED");
    expect(fake.state(id).outcomes).toEqual([{ kind: "complete", result: "ran" }]);
  });

  it("stop() aborts handlers still running after graceMs with reason 'shutdown' and reports nothing", async () => {
    const started = deferred();
    let reason: unknown;
    const { fake, worker, gateway } = await setup(async (_task, ctx) => {
      started.resolve();
      await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve(), { once: true }));
      reason = ctx.signal.reason;
      throw new Error("interrupted");
    });
    fake.add(null);
    await worker.start();
    await started.promise;
    const t0 = Date.now();
    await worker.stop({ graceMs: 100 });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(95);
    await until(() => reason !== undefined);
    expect(reason).toMatchObject({ reason: "shutdown" });
    await new Promise((r) => setTimeout(r, 50));
    expect(gateway.calls("FailTask")).toHaveLength(0);
    expect(gateway.calls("CompleteTask")).toHaveLength(0);
  });

  it("gives workflow tasks their parents' results", async () => {
    const fake = new FakePullQueue();
    let parents: Record<string, unknown> | undefined;
    const { worker, gateway } = await setup(
      (_task, ctx) => {
        parents = ctx.parents;
        return null;
      },
      {},
      fake,
    );
    const child = fake.add(null, { workflowId: "wf_1" });
    fake.workflows.set("wf_1", {
      id: "wf_1",
      name: "wf",
      status: "RUNNING",
      createdAt: new Date().toISOString(),
      completedAt: null,
      taskCount: 2,
      tasks: [
        { key: "fetch", dependsOn: [], task: { ...fake.state(child).task, id: "task_parent", result: { rows: 3 } } },
        { key: "report", dependsOn: ["fetch"], task: fake.state(child).task },
      ],
    });
    await worker.start();
    await until(() => fake.state(child).task.status === "SUCCEEDED");
    await worker.stop();
    expect(parents).toEqual({ fetch: { rows: 3 } });
    // From the lease itself: downloading the workflow (every task's result) per task cost a workflow of N tasks N² results.
    expect(gateway.calls("Workflow")).toHaveLength(0);
  });

  it("start() fails fast on a missing queue or a PUSH queue", async () => {
    const missing = new FakePullQueue();
    missing.exists = false;
    const first = await setup(() => null, {}, missing);
    await expect(first.worker.start()).rejects.toMatchObject({ code: "NOT_FOUND" });
    expect(first.worker.state).toBe("idle");
    await gateway?.close();

    const push = new FakePullQueue();
    push.mode = "PUSH";
    const second = await setup(() => null, {}, push);
    await expect(second.worker.start()).rejects.toMatchObject({ code: "BAD_USER_INPUT" });
  });

  it("validates its options", () => {
    const base = { url: "http://127.0.0.1:1/graphql", apiKey: "k", queue: "default", handler: () => null };
    expect(() => new Worker({ ...base, concurrency: 0 })).toThrow(RangeError);
    expect(() => new Worker({ ...base, leaseSeconds: 10, heartbeatEverySeconds: 10 })).toThrow(RangeError);
    expect(() => new Worker({ ...base, pollWaitSeconds: 60 })).toThrow(RangeError);
    expect(() => new Worker({ ...base, maxConcurrentPolls: 0 })).toThrow(RangeError);
    expect(() => new Worker({ ...base, maxConcurrentPolls: 9 })).toThrow(RangeError);
    expect(() => new Worker({ ...base, workerId: "w\u0000" })).toThrow(TypeError);
    expect(() => new Worker({ ...base, queue: "q\ud800" })).toThrow(TypeError);
    expect(new Worker({ ...base, workerId: "w-\u{1F600}" }).workerId).toBe("w-\u{1F600}");
    expect(new Worker(base).maxConcurrentPolls).toBe(3);
    expect(new Worker(base).heartbeatEverySeconds).toBe(10);
  });
});
