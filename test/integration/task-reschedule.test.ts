/**
 * rescheduleTask end to end: the gateway in-process, a real worker process
 * pushing to a local receiver, PULL leases through the API. No scheduler
 * runs, so nothing but the reschedule itself (its outbox row and the
 * post-commit fast path) can put a task moved earlier into Redis: no horizon
 * promotion, no reconciler sweep, no outbox retry.
 */
import { createKeySpace, createRedis, jobIdFor, MissingJobFinder, type RedisClient } from "@tasklane/queue";
import { listTasksThatBelongInRedis, startAttemptsByIds, takeTasksEnteringHorizon } from "@tasklane/db";
import { TasklaneClient } from "@tasklane/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApp, waitFor, type AppProcess } from "../helpers/app-process.js";
import { httpToWs, openSubscription } from "../helpers/graphql-ws-client.js";
import { startReceiver, type HttpReceiver } from "../helpers/http-receiver.js";
import { codeOf, createTenant, createTestDatabase, createTestRedis, gql, startGateway, type CreatedTenant, type StartedGateway, type TestDatabase, type TestRedis } from "../helpers/platform.js";
import { losingAnswers, sdkRejection } from "../helpers/sdk-calls.js";
import { startTestNotifier } from "../helpers/test-notifier.js";

let tdb: TestDatabase;
let redis: TestRedis;
let client: RedisClient;
let gateway: StartedGateway;
let receiver: HttpReceiver;
let worker: AppProcess;
let notifier: AppProcess;
let a: CreatedTenant;
let b: CreatedTenant;
/** Task id -> when each PUSH request for it arrived. */
const pushedAt = new Map<string, number[]>();
/** Task types whose first attempt the receiver fails (500). */
const failFirst = new Set<string>();

const TASK = "id status runAt attempts maxAttempts idempotencyKey orderingKey queue";
const RESCHEDULE = `mutation ($id: ID!, $runAt: DateTime, $d: Float) { rescheduleTask(id: $id, runAt: $runAt, delaySeconds: $d) { ${TASK} } }`;

interface TaskView {
  id: string;
  status: string;
  runAt: string;
  attempts: number;
  maxAttempts: number;
  idempotencyKey: string | null;
  orderingKey: string | null;
  queue: string;
}

const call = <T = Record<string, unknown>>(t: CreatedTenant, q: string, v?: Record<string, unknown>) => gql<T>(gateway.url, q, v, t.apiKey);
const ok = async <T = Record<string, unknown>>(t: CreatedTenant, q: string, v?: Record<string, unknown>): Promise<T> => {
  const res = await call<T>(t, q, v);
  if (res.errors) throw new Error(JSON.stringify(res.errors));
  return res.data as T;
};

async function submit(t: CreatedTenant, input: Record<string, unknown>): Promise<TaskView> {
  return (await ok<{ submitTask: TaskView }>(t, `mutation ($i: SubmitTaskInput!) { submitTask(input: $i) { ${TASK} } }`, { i: input })).submitTask;
}

const reschedule = (t: CreatedTenant, id: string, args: { runAt?: string; d?: number } = {}) => call<{ rescheduleTask: TaskView }>(t, RESCHEDULE, { id, ...args });

async function rescheduled(t: CreatedTenant, id: string, args: { runAt?: string; d?: number } = {}): Promise<TaskView> {
  const res = await reschedule(t, id, args);
  if (res.errors) throw new Error(JSON.stringify(res.errors));
  return (res.data as { rescheduleTask: TaskView }).rescheduleTask;
}

/** The row as storage has it, for "nothing changed" checks. */
async function row(id: string) {
  const res = await tdb.db.pool.query(
    `SELECT status, run_at, attempts, dispatch_generation, enqueued_generation, (SELECT count(*)::int FROM task_events e WHERE e.task_id = t.id) AS events
     FROM tasks t WHERE id = $1`,
    [id],
  );
  return res.rows[0] as { status: string; run_at: Date; attempts: number; dispatch_generation: number; enqueued_generation: number; events: number };
}

const lease = (t: CreatedTenant, queue: string) =>
  ok<{ leaseTasks: { leaseToken: string; task: { id: string } }[] }>(t, `mutation ($q: String!) { leaseTasks(queue: $q, workerId: "w", max: 10) { leaseToken task { id } } }`, { q: queue });

const UPSERT = `mutation ($i: UpsertQueueInput!) { upsertQueue(input: $i) { name } }`;

beforeAll(async () => {
  tdb = await createTestDatabase("resched");
  redis = createTestRedis();
  client = createRedis(redis.url);
  receiver = await startReceiver((req, res) => {
    const { taskId, type, attempt } = req.json as { taskId: string; type: string; attempt: number };
    pushedAt.set(taskId, [...(pushedAt.get(taskId) ?? []), Date.now()]);
    if (failFirst.has(type) && attempt === 1) res.writeHead(500).end("{}");
    else res.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
  gateway = await startGateway({ databaseUrl: tdb.url, redis, env: { ALLOW_PRIVATE_TARGETS: "1" } });
  worker = startApp("worker", { DATABASE_URL: tdb.url, REDIS_URL: redis.url, REDIS_KEY_PREFIX: redis.prefix, ALLOW_PRIVATE_TARGETS: "1", LOG_LEVEL: "warn" });
  // The event relay, for taskUpdated.
  notifier = startTestNotifier(tdb, redis);
  a = await createTenant(gateway);
  b = await createTenant(gateway);
  await ok(a, UPSERT, { i: { name: "push", mode: "PUSH", endpointUrl: `${receiver.url}/push` } });
  await ok(a, UPSERT, { i: { name: "pull", mode: "PULL" } });
  await ok(a, UPSERT, { i: { name: "race", mode: "PULL" } });
  await ok(a, UPSERT, { i: { name: "wfq", mode: "PULL" } });
  await ok(a, UPSERT, { i: { name: "line", mode: "PULL" } });
  await ok(a, UPSERT, { i: { name: "keyed", mode: "PULL" } });
  await ok(a, UPSERT, { i: { name: "counted", mode: "PULL" } });
}, 60_000);

afterAll(async () => {
  await worker?.stop();
  await notifier?.stop();
  await gateway?.close();
  await receiver?.close();
  client?.disconnect();
  await redis?.cleanup();
  await tdb?.drop();
});

describe("rescheduleTask moves a waiting task earlier", () => {
  it("a PUSH task delayed an hour (beyond the dispatch horizon, only in Postgres) is pushed within seconds of a reschedule to now", async () => {
    const task = await submit(a, { type: "later", queue: "push", delaySeconds: 3600, idempotencyKey: `k-${Date.now()}` });
    const before = await row(task.id);
    // Beyond the 5-minute horizon: never handed to Redis.
    expect(before.enqueued_generation).toBeLessThan(before.dispatch_generation);
    expect(before.status).toBe("SCHEDULED");
    const moved = await rescheduled(a, task.id);
    expect(moved).toMatchObject({ id: task.id, status: "QUEUED", attempts: 0, maxAttempts: task.maxAttempts, idempotencyKey: task.idempotencyKey });
    expect(Math.abs(Date.parse(moved.runAt) - Date.now())).toBeLessThan(5_000);
    await waitFor("the task to be pushed", () => pushedAt.has(task.id), 10_000);
    await waitFor("the task to succeed", async () => (await row(task.id)).status === "SUCCEEDED", 10_000);
  }, 30_000);

  it("a PUSH task due in a minute (its job already delayed in Redis) runs now: the new job has its own id", async () => {
    const task = await submit(a, { type: "soon", queue: "push", delaySeconds: 60 });
    const before = await row(task.id);
    expect(before.enqueued_generation).toBe(before.dispatch_generation);
    await rescheduled(a, task.id, { d: 0 });
    await waitFor("the task to be pushed", () => pushedAt.has(task.id), 10_000);
  }, 30_000);

  it("a PULL task delayed an hour is leased at once after a reschedule to now", async () => {
    const task = await submit(a, { type: "pull-later", queue: "pull", delaySeconds: 3600 });
    expect((await lease(a, "pull")).leaseTasks.map((l) => l.task.id)).not.toContain(task.id);
    await rescheduled(a, task.id);
    expect((await lease(a, "pull")).leaseTasks.map((l) => l.task.id)).toContain(task.id);
  });

  it("a task already due keeps its runAt, so its place in line and its aging, when run now or moved to a past time", async () => {
    const first = await submit(a, { type: "line-1", queue: "line" });
    const second = await submit(a, { type: "line-2", queue: "line" });
    for (const args of [{}, { runAt: new Date(0).toISOString() }, { d: 0 }]) {
      const moved = await rescheduled(a, first.id, args);
      expect([moved.status, moved.runAt]).toEqual(["QUEUED", first.runAt]);
    }
    const one = await ok<{ leaseTasks: { task: { id: string } }[] }>(a, `mutation { leaseTasks(queue: "line", workerId: "w", max: 1) { task { id } } }`);
    expect(one.leaseTasks.map((l) => l.task.id)).toEqual([first.id]);
    expect((await lease(a, "line")).leaseTasks.map((l) => l.task.id)).toEqual([second.id]);
  });

  it("a RETRYING task waiting out an hour's backoff retries now, its attempt count kept", async () => {
    failFirst.add("flaky");
    const task = await submit(a, { type: "flaky", queue: "push", maxAttempts: 3, backoff: { strategy: "FIXED", delaySeconds: 3600, jitter: false } });
    await waitFor("the first attempt to fail", async () => (await row(task.id)).status === "RETRYING", 10_000);
    const moved = await rescheduled(a, task.id);
    expect(moved).toMatchObject({ status: "QUEUED", attempts: 1, maxAttempts: 3 });
    await waitFor("the retry to succeed", async () => (await row(task.id)).status === "SUCCEEDED", 10_000);
    expect((await row(task.id)).attempts).toBe(2);
  }, 30_000);

  it("a task of an ordering key keeps its place: moved to now it runs first, the key's later task after it", async () => {
    const key = `ok-${Date.now()}`;
    const first = await submit(a, { type: "ordered", queue: "push", delaySeconds: 3600, orderingKey: key });
    const second = await submit(a, { type: "ordered", queue: "push", orderingKey: key });
    // The second waits behind the first (unfinished), whose runAt is an hour away.
    expect(await row(second.id)).toMatchObject({ status: "QUEUED", attempts: 0 });
    await rescheduled(a, first.id);
    await waitFor("both to succeed", async () => (await row(first.id)).status === "SUCCEEDED" && (await row(second.id)).status === "SUCCEEDED", 15_000);
    expect(pushedAt.get(first.id)![0]!).toBeLessThanOrEqual(pushedAt.get(second.id)![0]!);
  }, 30_000);

  it("on a paused queue the task waits, due, and runs once the queue is resumed", async () => {
    await ok(a, UPSERT, { i: { name: "paused", mode: "PUSH", endpointUrl: `${receiver.url}/paused`, paused: true } });
    const task = await submit(a, { type: "paused", queue: "paused", delaySeconds: 3600 });
    expect((await rescheduled(a, task.id)).status).toBe("QUEUED");
    await ok(a, `mutation { resumeQueue(name: "paused") { paused } }`);
    await waitFor("the task to be pushed", () => pushedAt.has(task.id), 10_000);
  }, 30_000);
});

describe("rescheduleTask moves a waiting task later", () => {
  it("a PUSH task due in 2 s moved an hour ahead does not run at its old time, while a task due then does; its old job is harmless", async () => {
    const moved = await submit(a, { type: "moved", queue: "push", delaySeconds: 2 });
    const control = await submit(a, { type: "control", queue: "push", delaySeconds: 2 });
    const old = await row(moved.id);
    const after = await rescheduled(a, moved.id, { d: 3600 });
    expect(after.status).toBe("SCHEDULED");
    expect(Date.parse(after.runAt) - Date.now()).toBeGreaterThan(3_500_000);
    // The job for the old time is still in Redis: started as a worker would when it comes due, nothing starts.
    const keys = createKeySpace(redis.prefix);
    const queueId = (await tdb.db.pool.query("SELECT queue_id FROM tasks WHERE id = $1", [moved.id])).rows[0].queue_id as string;
    const name = keys.bullQueueName(a.tenantId, queueId);
    const finder = new MissingJobFinder(client, keys);
    expect((await finder.find(name, [jobIdFor(moved.id, old.dispatch_generation)])).gone).toEqual([]);
    expect(await startAttemptsByIds(tdb.db, [moved.id], { workerId: "stale", leaseMs: 30_000, actor: "test", startAheadMs: 3_000 })).toEqual([]);

    await waitFor("the control task to be pushed", () => pushedAt.has(control.id), 10_000);
    // By now the worker has taken the old job (due with the control's) and refused it.
    await waitFor("the old job to leave Redis", async () => (await finder.find(name, [jobIdFor(moved.id, old.dispatch_generation)])).gone.length === 1, 10_000);
    expect(pushedAt.has(moved.id)).toBe(false);
    expect(await row(moved.id)).toMatchObject({ status: "SCHEDULED", attempts: 0 });
  }, 30_000);

  it("a PUSH task moved beyond the dispatch horizon waits in Postgres: the reconciler does not want it in Redis, and horizon promotion hands its new generation over as it nears", async () => {
    const HORIZON_MS = 300_000; // DISPATCH_HORIZON_SECONDS' default, the gateway's here
    const task = await submit(a, { type: "beyond", queue: "push", delaySeconds: 60 });
    const before = await row(task.id);
    expect(before.enqueued_generation).toBe(before.dispatch_generation);
    await rescheduled(a, task.id, { d: 2 * 3600 });
    const after = await row(task.id);
    expect([after.status, after.dispatch_generation, after.enqueued_generation]).toEqual(["SCHEDULED", before.dispatch_generation + 1, before.dispatch_generation]);
    expect((await listTasksThatBelongInRedis(tdb.db, HORIZON_MS, "", 10_000)).intents.map((i) => i.taskId)).not.toContain(task.id);
    expect((await takeTasksEnteringHorizon(tdb.db, HORIZON_MS, 10_000)).map((i) => i.taskId)).not.toContain(task.id);
    // Two hours on, as far as the horizon is concerned.
    const entering = (await takeTasksEnteringHorizon(tdb.db, 2 * 3600_000 + HORIZON_MS, 10_000)).find((i) => i.taskId === task.id);
    expect(entering?.dispatchGeneration).toBe(after.dispatch_generation);
    expect(entering?.runAt.toISOString()).toBe(after.run_at.toISOString());
  });

  it("a QUEUED PULL task moved later is not leased", async () => {
    const task = await submit(a, { type: "pull-now", queue: "pull" });
    expect((await rescheduled(a, task.id, { runAt: new Date(Date.now() + 3_600_000).toISOString() })).status).toBe("SCHEDULED");
    expect((await lease(a, "pull")).leaseTasks.map((l) => l.task.id)).not.toContain(task.id);
  });

  it("a task of an ordering key moved later keeps its place: the key's later task waits for it, another key's does not", async () => {
    const key = `k-${Date.now()}`;
    const first = await submit(a, { type: "keyed-1", queue: "keyed", orderingKey: key });
    const second = await submit(a, { type: "keyed-2", queue: "keyed", orderingKey: key });
    const other = await submit(a, { type: "keyed-other", queue: "keyed", orderingKey: `${key}-other` });
    expect((await rescheduled(a, first.id, { d: 3600 })).status).toBe("SCHEDULED");
    expect((await lease(a, "keyed")).leaseTasks.map((l) => l.task.id)).toEqual([other.id]);
    expect((await row(second.id)).status).toBe("QUEUED");
  });

  it("the queue's stats follow: QUEUED -> SCHEDULED and back counted in both", async () => {
    const stats = async () =>
      (await ok<{ queue: { stats: { scheduled: number; queued: number; oldestQueuedAgeSeconds: number | null } } }>(a, `{ queue(name: "counted") { stats { scheduled queued oldestQueuedAgeSeconds } } }`)).queue.stats;
    const task = await submit(a, { type: "counted", queue: "counted" });
    expect(await stats()).toMatchObject({ scheduled: 0, queued: 1 });
    await rescheduled(a, task.id, { d: 3600 });
    expect(await stats()).toEqual({ scheduled: 1, queued: 0, oldestQueuedAgeSeconds: null });
    await rescheduled(a, task.id);
    expect(await stats()).toMatchObject({ scheduled: 0, queued: 1 });
  });

  it("a RETRYING task moved later stays RETRYING", async () => {
    failFirst.add("flaky-later");
    const task = await submit(a, { type: "flaky-later", queue: "push", backoff: { strategy: "FIXED", delaySeconds: 60, jitter: false } });
    await waitFor("the first attempt to fail", async () => (await row(task.id)).status === "RETRYING", 10_000);
    expect(await rescheduled(a, task.id, { d: 7200 })).toMatchObject({ status: "RETRYING", attempts: 1 });
  }, 30_000);
});

describe("rescheduleTask's refusals change nothing", () => {
  async function refusedUnchanged(t: CreatedTenant, id: string, args: { runAt?: string; d?: number }, code: string): Promise<void> {
    const before = await row(id);
    const res = await reschedule(t, id, args);
    expect(codeOf(res), JSON.stringify(res.errors)).toBe(code);
    expect(await row(id)).toEqual(before);
  }

  it("CONFLICT for a RUNNING, a SUCCEEDED and a BLOCKED task", async () => {
    const running = await submit(a, { type: "lease-me", queue: "pull" });
    expect((await lease(a, "pull")).leaseTasks.map((l) => l.task.id)).toContain(running.id);
    await refusedUnchanged(a, running.id, {}, "CONFLICT");

    const done = await submit(a, { type: "done", queue: "push" });
    await waitFor("the task to succeed", async () => (await row(done.id)).status === "SUCCEEDED", 10_000);
    await refusedUnchanged(a, done.id, {}, "CONFLICT");

    const wf = await ok<{ submitWorkflow: { tasks: { key: string; task: { id: string; status: string } }[] } }>(
      a,
      `mutation ($i: SubmitWorkflowInput!) { submitWorkflow(input: $i) { tasks { key task { id status } } } }`,
      { i: { name: "wf", tasks: [{ key: "p", type: "p", queue: "wfq" }, { key: "c", type: "c", queue: "wfq", dependsOn: ["p"] }] } },
    );
    const child = wf.submitWorkflow.tasks.find((x) => x.key === "c")!.task;
    expect(child.status).toBe("BLOCKED");
    await refusedUnchanged(a, child.id, {}, "CONFLICT");
    // Its parent, QUEUED (nobody leases that queue), waits for a time like any task: moved later it is SCHEDULED.
    const parent = wf.submitWorkflow.tasks.find((x) => x.key === "p")!.task;
    expect(parent.status).toBe("QUEUED");
    expect((await rescheduled(a, parent.id, { d: 7200 })).status).toBe("SCHEDULED");
  }, 30_000);

  it("BAD_USER_INPUT for both arguments, a negative or too long delay, a runAt past the horizon", async () => {
    const task = await submit(a, { type: "bad", queue: "pull", delaySeconds: 3600 });
    await refusedUnchanged(a, task.id, { runAt: new Date(Date.now() + 60_000).toISOString(), d: 5 }, "BAD_USER_INPUT");
    await refusedUnchanged(a, task.id, { d: -1 }, "BAD_USER_INPUT");
    await refusedUnchanged(a, task.id, { d: 400 * 86_400 }, "BAD_USER_INPUT");
    await refusedUnchanged(a, task.id, { runAt: new Date(Date.now() + 400 * 86_400_000).toISOString() }, "BAD_USER_INPUT");
    await refusedUnchanged(a, task.id, { runAt: "tomorrow" }, "BAD_USER_INPUT");
  });

  it("NOT_FOUND for another tenant's task and for an id that names nothing", async () => {
    const task = await submit(a, { type: "mine", queue: "pull", delaySeconds: 3600 });
    await refusedUnchanged(b, task.id, {}, "NOT_FOUND");
    expect(codeOf(await reschedule(a, "task_0190a0a0a0a07000800000000000000a"))).toBe("NOT_FOUND");
    expect(codeOf(await reschedule(a, "nonsense"))).toBe("NOT_FOUND");
  });
});

describe("rescheduleTask against a start", () => {
  it("a reschedule to later and a lease of the same due task: exactly one wins, never both", async () => {
    let leasedWins = 0;
    let rescheduleWins = 0;
    for (let round = 0; round < 12; round++) {
      const task = await submit(a, { type: `race-${round}`, queue: "race" });
      const [leased, moved] = await Promise.all([lease(a, "race"), reschedule(a, task.id, { d: 3600 })]);
      const gotLease = leased.leaseTasks.some((l) => l.task.id === task.id);
      const state = await row(task.id);
      if (gotLease) {
        leasedWins++;
        expect(codeOf(moved)).toBe("CONFLICT");
        expect(state).toMatchObject({ status: "RUNNING", attempts: 1 });
      } else {
        rescheduleWins++;
        expect(moved.errors).toBeUndefined();
        expect(state).toMatchObject({ status: "SCHEDULED", attempts: 0 });
      }
      // Finish a leased one so the queue holds nothing due for the next round.
      for (const l of leased.leaseTasks) {
        await ok(a, `mutation ($id: ID!, $t: String!) { completeTask(taskId: $id, leaseToken: $t) { id } }`, { id: l.task.id, t: l.leaseToken });
      }
    }
    expect(leasedWins + rescheduleWins).toBe(12);
  }, 60_000);
});

describe("rescheduleTask's record", () => {
  it("writes an audit event from the caller with the old and new runAt", async () => {
    const task = await submit(a, { type: "audited", queue: "pull", delaySeconds: 3600 });
    const moved = await rescheduled(a, task.id, { d: 7200 });
    const data = await ok<{ task: { events: { previousStatus: string; status: string; actor: string; reason: string }[] } }>(
      a,
      `query ($id: ID!) { task(id: $id) { events { previousStatus status actor reason } } }`,
      { id: task.id },
    );
    const last = data.task.events.at(-1)!;
    expect(last).toMatchObject({ previousStatus: "SCHEDULED", status: "SCHEDULED" });
    expect(last.actor).toMatch(/^api-key:/);
    expect(last.reason).toBe(`rescheduled: runAt ${task.runAt} -> ${moved.runAt}`);
  });
});

describe("rescheduleTask and subscriptions", () => {
  it("taskUpdated subscribers hear a reschedule as any change", async () => {
    const task = await submit(a, { type: "watched", queue: "pull", delaySeconds: 3600 });
    const sub = openSubscription<{ taskUpdated: { taskId: string; status: string; previousStatus: string | null } }>(
      httpToWs(gateway.url),
      `Bearer ${a.apiKey}`,
      `subscription ($id: ID!) { taskUpdated(taskId: $id) { taskId status previousStatus } }`,
      { id: task.id },
    );
    try {
      // Each reschedule is an event: the subscription hears those made once it (and the relay's view of it) is live.
      await waitFor(
        "a reschedule to be heard",
        async () => {
          await rescheduled(a, task.id, { d: 7200 });
          // The submission's own event (previousStatus null) may come first, when the relay was behind.
          return sub.until("a reschedule's event", (vs) => vs.some((v) => v.taskUpdated.previousStatus !== null), 1_000).then(() => true, () => false);
        },
        30_000,
        0,
      );
      expect(sub.values.find((v) => v.taskUpdated.previousStatus !== null)!.taskUpdated).toEqual({ taskId: task.id, previousStatus: "SCHEDULED", status: "SCHEDULED" });
    } finally {
      await sub.close();
    }
  }, 40_000);
});

describe("the SDK's tasks.reschedule and tasks.runNow", () => {
  it("move a task and answer it; refusals arrive as TasklaneError with the contract's codes", async () => {
    const sdk = new TasklaneClient({ url: gateway.url, apiKey: a.apiKey });
    const task = await sdk.tasks.submit({ type: "sdk", queue: "pull", delaySeconds: 3600 });
    const at = new Date(Date.now() + 7_200_000);
    const later = await sdk.tasks.reschedule(task.id, { runAt: at });
    expect(later).toMatchObject({ id: task.id, status: "SCHEDULED" });
    expect(Date.parse(later.runAt)).toBe(at.getTime());
    expect((await sdk.tasks.reschedule(task.id, { delaySeconds: 60 })).status).toBe("SCHEDULED");
    expect((await sdk.tasks.runNow(task.id)).status).toBe("QUEUED");
    expect((await sdkRejection(sdk.tasks.reschedule(task.id, { runAt: at, delaySeconds: 5 } as never))).code).toBe("BAD_USER_INPUT");
    const done = await sdk.tasks.cancel(task.id);
    expect((await sdkRejection(sdk.tasks.runNow(done.id))).code).toBe("CONFLICT");
  });

  it("send a lost answer's call again only when it names a runAt still ahead", async () => {
    const task = await submit(a, { type: "sdk-lost", queue: "pull", delaySeconds: 3600 });
    const withRunAt = losingAnswers(/rescheduleTask/);
    const client = (fetch: typeof withRunAt.fetch) => new TasklaneClient({ url: gateway.url, apiKey: a.apiKey, fetch, retry: { attempts: 3, baseDelayMs: 10 } });
    await sdkRejection(client(withRunAt.fetch).tasks.reschedule(task.id, { runAt: new Date(Date.now() + 7_200_000) }));
    expect(withRunAt.sent()).toBe(3);
    // A runAt already past is "now": sent once, as runNow.
    const past = losingAnswers(/rescheduleTask/);
    await sdkRejection(client(past.fetch).tasks.reschedule(task.id, { runAt: new Date(Date.now() - 1000) }));
    expect(past.sent()).toBe(1);
    const withDelay = losingAnswers(/rescheduleTask/);
    await sdkRejection(client(withDelay.fetch).tasks.reschedule(task.id, { delaySeconds: 600 }));
    expect(withDelay.sent()).toBe(1);
    const now = losingAnswers(/rescheduleTask/);
    await sdkRejection(client(now.fetch).tasks.runNow(task.id));
    expect(now.sent()).toBe(1);
  });
});
