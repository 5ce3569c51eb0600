/**
 * What the SDK Worker reports for handlers that throw or return values the
 * gateway cannot store or JSON cannot carry, against the real gateway on real
 * Postgres and Redis. Every task allows one attempt or fails non-retryably, so
 * no scheduler is needed: each outcome is the Worker's own report, and a
 * report the gateway refused leaves the task RUNNING (which the test sees).
 */
import { NonRetryableError, TasklaneClient, Worker, isTasklaneError, type FetchLike, type TaskWithAttempts, type WorkerErrorContext } from "@tasklane/sdk";
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
  async function runCases(cases: Record<string, () => unknown>, maxAttempts = 1, connection: Pick<ConstructorParameters<typeof TasklaneClient>[0], "fetch" | "retry"> = {}) {
    const { apiKey } = await createTenant(platform.gateway);
    const client = new TasklaneClient({ url: platform.gateway.url, apiKey, ...connection });
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

  /**
   * A fetch that loses the answer of the first outcome call (completeTask(s), failTask) carrying
   * each task, after the gateway has answered it: the call was recorded, and the caller sees a
   * reset connection (NETWORK_ERROR, which may have run), so it is sent again.
   */
  function losingFirstOutcomeAnswers(): { fetch: FetchLike; lost: string[] } {
    const seen = new Set<string>();
    const lost: string[] = [];
    const fetchLike: FetchLike = async (input, init) => {
      const res = await fetch(input, init);
      const { query, variables } = JSON.parse(String(init.body)) as { query: string; variables: { taskId?: string; completions?: Array<{ taskId: string }> } };
      if (!/\b(completeTasks?|failTask)\(/.test(query)) return res;
      const outcome = variables.taskId !== undefined ? [variables.taskId] : (variables.completions ?? []).map((c) => c.taskId);
      const fresh = outcome.filter((id) => !seen.has(id));
      if (fresh.length === 0) return res;
      await res.text();
      for (const id of fresh) seen.add(id);
      lost.push(...fresh);
      throw new TypeError("fetch failed", { cause: Object.assign(new Error("socket hang up"), { code: "ECONNRESET" }) });
    };
    return { fetch: fetchLike, lost };
  }

  it.each([
    ["resent by the transport", {}],
    ["held and resent by the Worker (retry: false)", { retry: false as const }],
  ])("an outcome recorded whose answer was lost, %s, is not reported: its CONFLICT is its own", async (_how, retry) => {
    const losing = losingFirstOutcomeAnswers();
    const { settled, errors } = await runCases(
      {
        ok: () => ({ done: true }),
        dies: () => {
          throw new NonRetryableError("no good");
        },
        retried: () => {
          throw new Error("again");
        },
      },
      1,
      { fetch: losing.fetch, ...retry },
    );
    expect(losing.lost).toHaveLength(3);
    expect(errors.map(({ error, context }) => ({ context, message: error instanceof Error ? error.message : String(error) }))).toEqual([]);
    expect(Object.fromEntries([...settled].map(([type, t]) => [type, { status: t.status, outcomes: t.attemptHistory.map((a) => a.outcome), result: t.result }]))).toEqual({
      ok: { status: "SUCCEEDED", outcomes: ["SUCCEEDED"], result: { done: true } },
      dies: { status: "DEAD", outcomes: ["FAILED"], result: null },
      retried: { status: "DEAD", outcomes: ["FAILED"], result: null },
    });
  });

  it("a cancelled task's outcome is still refused and reported when its answer was lost and it was resent", async () => {
    const { apiKey } = await createTenant(platform.gateway);
    const losing = losingFirstOutcomeAnswers();
    const client = new TasklaneClient({ url: platform.gateway.url, apiKey, fetch: losing.fetch });
    const errors: Array<{ error: unknown; context: WorkerErrorContext }> = [];
    const worker = new Worker({
      client,
      queue: "default",
      pollWaitSeconds: 1,
      onError: (error, context) => errors.push({ error, context }),
      handler: async (task) => {
        await client.tasks.cancel(task.id);
        return "too late";
      },
    });
    workers.push(worker);
    const { id } = await client.tasks.submit({ type: "cancelled", maxAttempts: 1 });
    await worker.start();
    const deadline = Date.now() + 15_000;
    while (errors.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    await worker.stop({ graceMs: 2_000 });
    expect(losing.lost).toEqual([id]);
    expect(errors).toHaveLength(1);
    expect(errors[0]?.context).toEqual({ phase: "complete", taskId: id, refused: true });
    expect(isTasklaneError(errors[0]?.error, "CONFLICT")).toBe(true);
    expect((await client.tasks.get(id))?.status).toBe("CANCELLED");
  });

  it("client.leases: complete, completeMany and fail whose answers were lost answer as recorded; another lease's outcome is still CONFLICT", async () => {
    const { apiKey } = await createTenant(platform.gateway);
    const losing = losingFirstOutcomeAnswers();
    const client = new TasklaneClient({ url: platform.gateway.url, apiKey, fetch: losing.fetch });
    const ids = [];
    for (let i = 0; i < 4; i++) ids.push((await client.tasks.submit({ type: `direct-${i}`, maxAttempts: 1 })).id);
    const leases = await client.leases.lease({ queue: "default", workerId: "direct", max: 4, waitSeconds: 0 });
    const lease = (id: string) => leases.find((l) => l.task.id === id) as (typeof leases)[number];
    const [a, b, c, d] = ids as [string, string, string, string];
    expect(await client.leases.complete(a, lease(a).leaseToken, { n: 1 })).toMatchObject({ id: a, status: "SUCCEEDED", result: { n: 1 } });
    expect(await client.leases.fail(b, lease(b).leaseToken, "broke", false)).toMatchObject({ id: b, status: "DEAD", lastError: "broke" });
    const many = await client.leases.completeMany([{ taskId: c, leaseToken: lease(c).leaseToken, result: "c" }]);
    expect(many).toEqual([{ taskId: c, accepted: true, code: null, message: null, task: expect.objectContaining({ id: c, status: "SUCCEEDED", result: "c" }) }]);
    expect(losing.lost).toEqual([a, b, c]);
    // d's outcome sent with c's token: refused, resent or not.
    const wrong = await client.leases.settleMany([{ taskId: d, leaseToken: lease(c).leaseToken, result: null }], { resend: true });
    expect(wrong).toEqual([{ taskId: d, accepted: false, code: "CONFLICT", message: expect.any(String) }]);
    await expect(client.leases.fail(a, lease(a).leaseToken, "late", true, { resend: true })).rejects.toMatchObject({ code: "CONFLICT" });
  });

  it("client.leases: a completeMany of 12 whose answer was lost answers every task as recorded, within the gateway's bound on bodies per operation", async () => {
    const { apiKey } = await createTenant(platform.gateway);
    const losing = losingFirstOutcomeAnswers();
    const client = new TasklaneClient({ url: platform.gateway.url, apiKey, fetch: losing.fetch });
    for (let i = 0; i < 12; i++) await client.tasks.submit({ type: `many-${i}`, maxAttempts: 1 });
    const leases = await client.leases.lease({ queue: "default", workerId: "many", max: 12, waitSeconds: 0 });
    expect(leases).toHaveLength(12);
    const many = await client.leases.completeMany(leases.map((l) => ({ taskId: l.task.id, leaseToken: l.leaseToken, result: l.task.type })));
    expect(losing.lost).toHaveLength(12);
    expect(many.map((o) => [o.accepted, o.task?.status, o.task?.result])).toEqual(leases.map((l) => [true, "SUCCEEDED", l.task.type]));
  });
});
