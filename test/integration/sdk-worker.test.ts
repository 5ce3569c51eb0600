/**
 * The SDK's examples as end-to-end tests: a pull Worker against the real
 * gateway (in-process) and a real scheduler process (retry promotion, lease
 * expiry), on real Postgres and Redis.
 */
import { TasklaneClient, TasklaneError, Worker, type Lease, type WorkerErrorContext } from "@tasklane/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cancelRunningTask } from "../../packages/sdk/examples/cancellation.js";
import { createExampleWorker } from "../../packages/sdk/examples/pull-worker.js";
import { submitAndWait } from "../../packages/sdk/examples/submit-and-wait.js";
import { startApp, type AppProcess } from "../helpers/app-process.js";
import { useGateway } from "../helpers/gateway-fixture.js";
import { createTenant } from "../helpers/platform.js";

describe("SDK pull worker end to end", () => {
  const platform = useGateway();
  let scheduler: AppProcess | undefined;
  const workers: Worker[] = [];

  beforeAll(async () => {
    scheduler = startApp("scheduler", {
      DATABASE_URL: platform.database.url,
      REDIS_URL: platform.redis.url,
      REDIS_KEY_PREFIX: platform.redis.prefix,
      LOG_LEVEL: "warn",
    });
    // Fail fast, with the reason, while the gateway's lease resolvers are placeholders.
    const probe = await tenantClient();
    try {
      await probe.leases.lease({ queue: "default", workerId: "probe", max: 1, waitSeconds: 0 });
    } catch (error: unknown) {
      throw new Error(`the gateway's leaseTasks does not work yet: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
  });

  afterAll(async () => {
    await Promise.all(workers.map((w) => w.stop({ graceMs: 1_000 })));
    await scheduler?.stop();
  });

  async function tenantClient(): Promise<TasklaneClient> {
    const { apiKey } = await createTenant(platform.gateway);
    return new TasklaneClient({ url: platform.gateway.url, apiKey });
  }

  /** The pull-worker example for a fresh tenant, with its onError reports collected. */
  async function startExampleWorker(client: TasklaneClient) {
    const errors: Array<{ error: unknown; context: WorkerErrorContext }> = [];
    const worker = createExampleWorker(client, { pollWaitSeconds: 1, onError: (error, context) => errors.push({ error, context }) });
    workers.push(worker as Worker);
    await worker.start();
    return { worker, errors };
  }

  it("submit-and-wait + pull-worker: the task SUCCEEDS with the handler's result after one attempt", async () => {
    const client = await tenantClient();
    const { worker, errors } = await startExampleWorker(client);
    const task = await submitAndWait(client, "Ada", { timeoutMs: 30_000 });
    await worker.stop();
    expect(task).toMatchObject({ status: "SUCCEEDED", result: { greeting: "Hello, Ada!" }, attempts: 1, lastError: null });
    expect(task.attemptHistory).toHaveLength(1);
    expect(task.attemptHistory[0]).toMatchObject({ number: 1, workerId: worker.workerId, outcome: "SUCCEEDED" });
    expect(errors).toEqual([]);
  });

  it("a Worker stopped as work arrives leaves no task leased to nobody: each ran, or waits unleased and uncharged", async () => {
    const client = await tenantClient();
    const ids: string[] = [];
    // Stopping aborts the long poll; a lease granted in that instant used to reach nobody (most rounds, in QA).
    for (let round = 0; round < 6; round++) {
      const worker = new Worker({ client, queue: "default", concurrency: 5, pollWaitSeconds: 5, handler: async () => "ran" });
      await worker.start();
      ids.push((await client.tasks.submit({ type: "arriving", queue: "default", maxAttempts: 1 })).id);
      await new Promise((r) => setTimeout(r, 5));
      await worker.stop({ graceMs: 3_000 });
    }
    const rows = await platform.database.db.pool.query(`SELECT status, attempts FROM tasks WHERE id = ANY($1)`, [ids]);
    expect(rows.rows).toHaveLength(ids.length);
    for (const row of rows.rows) {
      expect(["SUCCEEDED", "QUEUED"]).toContain(row.status);
      expect(row.attempts).toBe(row.status === "SUCCEEDED" ? 1 : 0);
    }
  });

  it("NonRetryableError sends the task to DEAD after one attempt, whatever maxAttempts says", async () => {
    const client = await tenantClient();
    const { worker } = await startExampleWorker(client);
    const submitted = await client.tasks.submit({ type: "example.reject", maxAttempts: 5 });
    const task = await client.tasks.waitFor(submitted.id, { timeoutMs: 30_000 });
    await worker.stop();
    expect(task).toMatchObject({ status: "DEAD", attempts: 1, lastError: "this input can never succeed" });
    expect(task.attemptHistory.map((a) => a.outcome)).toEqual(["FAILED"]);
    expect((await client.tasks.deadLetters({ queue: "default" })).nodes.map((t) => t.id)).toEqual([submitted.id]);
  });

  it("a retryable error is retried with the task's backoff, then succeeds", async () => {
    const client = await tenantClient();
    const { worker } = await startExampleWorker(client);
    const submitted = await client.tasks.submit({
      type: "example.flaky",
      payload: { succeedOnAttempt: 3 },
      maxAttempts: 5,
      backoff: { strategy: "FIXED", delaySeconds: 0.2 },
    });
    const task = await client.tasks.waitFor(submitted.id, { timeoutMs: 30_000 });
    await worker.stop();
    expect(task).toMatchObject({ status: "SUCCEEDED", attempts: 3, result: { attempt: 3 } });
    expect(task.attemptHistory.map((a) => a.outcome)).toEqual(["FAILED", "FAILED", "SUCCEEDED"]);
    expect(task.attemptHistory[0]?.error).toBe("transient failure on attempt 1");
  });

  it("startAheadMs: leaseTasks leases a task due within it, with startInMs; the Worker starts its handler at runAt", async () => {
    const client = await tenantClient();
    const runAt = new Date(Date.now() + 1_500);
    const submitted = await client.tasks.submit({ type: "ahead", runAt: runAt.toISOString() });
    expect(await client.leases.lease({ queue: "default", workerId: "w", max: 5, waitSeconds: 0 })).toEqual([]);
    expect(await client.leases.lease({ queue: "default", workerId: "w", max: 5, waitSeconds: 0, startAheadMs: 200 })).toEqual([]);
    // A long poll with a look-ahead answers once the task is that close to its runAt, not at it.
    const [lease] = await client.leases.lease({ queue: "default", workerId: "w", max: 5, waitSeconds: 5, startAheadMs: 1_000 });
    const answeredAt = Date.now();
    expect(lease?.task.id).toBe(submitted.id);
    expect(answeredAt).toBeLessThan(runAt.getTime());
    expect(lease!.startInMs).toBeGreaterThan(0);
    expect(lease!.startInMs).toBeLessThanOrEqual(1_000);
    // The attempt and the lease count from runAt.
    expect(lease!.task.startedAt).toBe(runAt.toISOString());
    expect(new Date(lease!.leaseExpiresAt).getTime()).toBe(runAt.getTime() + 30_000);
    await client.leases.complete(submitted.id, lease!.leaseToken, null);

    const started: number[] = [];
    const worker = new Worker({ client, queue: "default", pollWaitSeconds: 1, startAheadMs: 1_000, handler: () => void started.push(Date.now()) });
    workers.push(worker);
    await worker.start();
    const later = new Date(Date.now() + 1_500);
    const second = await client.tasks.submit({ type: "ahead", runAt: later.toISOString() });
    expect((await client.tasks.waitFor(second.id, { timeoutMs: 30_000 })).status).toBe("SUCCEEDED");
    await worker.stop();
    expect(started).toHaveLength(1);
    expect(started[0]).toBeGreaterThanOrEqual(later.getTime());
  });

  it("a handler that stops when its timeoutSeconds runs out leaves the attempt TIMED_OUT, nothing reported", async () => {
    const client = await tenantClient();
    const errors: Array<{ error: unknown; context: WorkerErrorContext }> = [];
    const worker = new Worker({
      client,
      queue: "default",
      pollWaitSeconds: 1,
      onError: (error, context) => errors.push({ error, context }),
      handler: (_task, ctx) => new Promise((_resolve, reject) => ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason), { once: true })),
    });
    workers.push(worker);
    await worker.start();
    const submitted = await client.tasks.submit({ type: "overruns", timeoutSeconds: 1, maxAttempts: 1 });
    const task = await client.tasks.waitFor(submitted.id, { timeoutMs: 30_000 });
    await worker.stop();
    // The handler's throw of its abort was sent as a failure: FAILED "Task … aborted: lease-lost".
    expect(task).toMatchObject({ status: "DEAD", lastError: "Timed out after 1 s" });
    expect(task.attemptHistory.map((a) => a.outcome)).toEqual(["TIMED_OUT"]);
    expect(errors).toEqual([]);
  });

  it("counts a task's time from when its lease was granted, not from when the long poll that waited for it was sent", async () => {
    const client = await tenantClient();
    const aborted: string[] = [];
    const worker = new Worker({
      client,
      queue: "default",
      concurrency: 1,
      pollWaitSeconds: 10,
      handler: async (_task, ctx) => {
        ctx.signal.addEventListener("abort", () => aborted.push(String(ctx.signal.reason)), { once: true });
        await new Promise((r) => setTimeout(r, 1_500));
        return "in time";
      },
    });
    workers.push(worker);
    await worker.start();
    // Submitted 2.5 s into the worker's 10 s poll: its 3 s budget starts when the poll leases it. Counted
    // from the poll's request, the handler was aborted 0.5 s in and its result, 1 s later, thrown away.
    await new Promise((r) => setTimeout(r, 2_500));
    const submitted = await client.tasks.submit({ type: "late-in-a-poll", timeoutSeconds: 3, maxAttempts: 1 });
    const task = await client.tasks.waitFor(submitted.id, { timeoutMs: 30_000 });
    await worker.stop();
    expect(aborted).toEqual([]);
    expect(task).toMatchObject({ status: "SUCCEEDED", result: "in time" });
  });

  it("cancellation: cancelTask reaches the running handler's AbortSignal", async () => {
    const client = await tenantClient();
    const { task, abortReason } = await cancelRunningTask(client);
    expect(abortReason).toBe("cancelled");
    expect(task.status).toBe("CANCELLED");
    expect(task.result).toBeNull();
  });

  it("a stale worker's outcome is refused once its lease expired and the task was leased again", async () => {
    const client = await tenantClient();
    const submitted = await client.tasks.submit({ type: "sdk.stale" });
    const [first] = await client.leases.lease({ queue: "default", workerId: "slow", max: 1, leaseSeconds: 1, waitSeconds: 5 });
    expect(first?.task.id).toBe(submitted.id);
    // The scheduler expires the lease; the task is leased again with a new token.
    let second: Lease | undefined;
    const deadline = Date.now() + 20_000;
    while (second === undefined && Date.now() < deadline) {
      [second] = await client.leases.lease({ queue: "default", workerId: "fresh", max: 1, leaseSeconds: 30, waitSeconds: 1 });
    }
    expect(second?.task.id).toBe(submitted.id);
    expect(second?.leaseToken).not.toBe(first?.leaseToken);
    expect(second?.task.attempts).toBe(2);

    const refused = await client.leases.complete(submitted.id, first?.leaseToken ?? "", { from: "slow" }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(TasklaneError);
    expect(refused).toMatchObject({ code: "CONFLICT" });
    const done = await client.leases.complete(submitted.id, second?.leaseToken ?? "", { from: "fresh" });
    expect(done).toMatchObject({ status: "SUCCEEDED", result: { from: "fresh" } });
  });
});
