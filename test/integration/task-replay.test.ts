/**
 * replayTask: a finished task (SUCCEEDED, DEAD, CANCELLED) runs again as a
 * new task with the same submission, on a PUSH endpoint (a real worker
 * process) and through a PULL lease; the original is unchanged and the new
 * task names it (replayOf). Unfinished tasks and a workflow's are CONFLICT,
 * another tenant's, unknown ones and those deleted with their queue
 * NOT_FOUND; the replay is a submission like any other: a tenant at its
 * maxPendingTasks and a platform at its backlog cap refuse it as they refuse
 * submitTask, nothing created, and a paused queue takes it to wait. The SDK's
 * tasks.replay is not sent again after a lost answer.
 */
import { IdPrefix, MAX_PAYLOAD_BYTES, newId } from "@tasklane/core";
import { pruneFinished } from "@tasklane/db";
import { TasklaneClient } from "@tasklane/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApp, waitFor, type AppProcess } from "../helpers/app-process.js";
import { useGateway } from "../helpers/gateway-fixture.js";
import { startReceiver, type HttpReceiver } from "../helpers/http-receiver.js";
import { asTenant, codeOf, createTenant, gql, waitFor as waitUntil, type CreatedTenant, type StartedGateway } from "../helpers/platform.js";
import { losingAnswers, sdkRejection } from "../helpers/sdk-calls.js";

const platform = useGateway({ env: { ALLOW_PRIVATE_TARGETS: "1" } });
const pool = () => platform.database.db.pool;
let receiver: HttpReceiver;
let worker: AppProcess;
/** Task types the PUSH endpoint refuses for good (HTTP 400) until the test "fixes" it. */
const broken = new Set<string>();

const REPLAY = `mutation ($id: ID!) { replayTask(id: $id) { id status queue type payload priority maxAttempts timeoutSeconds orderingKey idempotencyKey replayOf } }`;
const replayAs = (t: CreatedTenant, id: string, gateway: StartedGateway = platform.gateway) =>
  gql<{ replayTask: Record<string, unknown> & { id: string; status: string; replayOf: string } }>(gateway.url, REPLAY, { id }, t.apiKey);
const UPSERT = `mutation ($i: UpsertQueueInput!) { upsertQueue(input: $i) { name } }`;

async function submit(t: CreatedTenant, input: Record<string, unknown>): Promise<string> {
  return (await asTenant(platform.gateway, t)<{ submitTask: { id: string } }>(`mutation ($i: SubmitTaskInput!) { submitTask(input: $i) { id } }`, { i: input })).submitTask.id;
}

async function leaseOne(t: CreatedTenant, queue = "default"): Promise<{ task: { id: string; payload: unknown }; leaseToken: string } | undefined> {
  const data = await asTenant(platform.gateway, t)<{ leaseTasks: { task: { id: string; payload: unknown }; leaseToken: string }[] }>(
    `mutation ($q: String!) { leaseTasks(queue: $q, workerId: "w", max: 1) { task { id payload } leaseToken } }`,
    { q: queue },
  );
  return data.leaseTasks[0];
}

async function complete(t: CreatedTenant, lease: { task: { id: string }; leaseToken: string }): Promise<void> {
  await asTenant(platform.gateway, t)(`mutation ($id: ID!, $tok: String!) { completeTask(taskId: $id, leaseToken: $tok, result: {done: true}) { status } }`, {
    id: lease.task.id,
    tok: lease.leaseToken,
  });
}

/** Everything stored about a task: its row, attempts and audit events (what "unchanged" compares). */
async function stored(id: string) {
  const row = (await pool().query("SELECT * FROM tasks WHERE id = $1", [id])).rows[0];
  const attempts = (await pool().query("SELECT * FROM task_attempts WHERE task_id = $1 ORDER BY number", [id])).rows;
  const events = (await pool().query("SELECT * FROM task_events WHERE task_id = $1 ORDER BY id", [id])).rows;
  return { row, attempts, events };
}

const taskCount = async (tenantId: string) => Number((await pool().query("SELECT count(*) AS n FROM tasks WHERE tenant_id = $1", [tenantId])).rows[0].n);
const statusOf = async (id: string) => (await pool().query<{ status: string }>("SELECT status FROM tasks WHERE id = $1", [id])).rows[0]?.status;
const pushedPayloads = (type: string) => receiver.requests.filter((r) => (r.json as { type?: string }).type === type).map((r) => r.json as { taskId: string; payload: unknown });

beforeAll(async () => {
  receiver = await startReceiver((req, res) => {
    const { type } = req.json as { type: string };
    if (broken.has(type)) res.writeHead(400, { "content-type": "text/plain" }).end("bad handler");
    else res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');
  });
  const { url, prefix } = platform.redis;
  worker = startApp("worker", { DATABASE_URL: platform.database.url, REDIS_URL: url, REDIS_KEY_PREFIX: prefix, ALLOW_PRIVATE_TARGETS: "1", LOG_LEVEL: "warn", WORKER_CONCURRENCY: "4" });
});

afterAll(async () => {
  await worker?.stop();
  await receiver?.close();
});

describe("replayTask", () => {
  it("runs a SUCCEEDED PULL task again as a new task with its submission, due now, without its idempotency key; the original is unchanged (SDK tasks.replay)", async () => {
    const t = await createTenant(platform.gateway);
    const sdk = new TasklaneClient({ url: platform.gateway.url, apiKey: t.apiKey });
    const input = {
      type: "report",
      payload: { customer: 42, lines: [1, 2, 3] },
      metadata: { origin: "test" },
      priority: "HIGH" as const,
      maxAttempts: 5,
      backoff: { strategy: "LINEAR" as const, delaySeconds: 2, maxDelaySeconds: 30, jitter: false },
      timeoutSeconds: 45,
      orderingKey: "customer-42",
      idempotencyKey: "report-42",
      callbackUrl: `${receiver.url}/callback`,
    };
    const original = await sdk.tasks.submit(input);
    const lease = await leaseOne(t);
    expect(lease?.task.id).toBe(original.id);
    await complete(t, lease!);
    const before = await stored(original.id);
    expect(before.row.status).toBe("SUCCEEDED");

    const replay = await sdk.tasks.replay(original.id);
    expect(replay.id).not.toBe(original.id);
    expect(replay).toMatchObject({
      status: "QUEUED",
      queue: "default",
      type: "report",
      payload: input.payload,
      priority: "HIGH",
      maxAttempts: 5,
      timeoutSeconds: 45,
      orderingKey: "customer-42",
      idempotencyKey: null,
      workflowId: null,
      scheduleId: null,
      attempts: 0,
      result: null,
      replayOf: original.id,
    });
    expect(Math.abs(Date.parse(replay.runAt) - Date.now())).toBeLessThan(30_000);
    const row = (await stored(replay.id)).row;
    // What the API's Task does not show: metadata, callbackUrl, the backoff policy.
    expect(row).toMatchObject({
      metadata: input.metadata,
      callback_url: input.callbackUrl,
      backoff_strategy: "LINEAR",
      backoff_delay_seconds: 2,
      backoff_max_delay_seconds: 30,
      backoff_jitter: false,
      idempotency_key: null,
      replay_of: original.id,
    });
    // Its creation event names the original.
    expect((await stored(replay.id)).events.map((e) => [e.to_status, e.reason])).toEqual([["QUEUED", `replay of ${original.id}`]]);

    // A worker gets the same payload again, under the new id.
    const again = await leaseOne(t);
    expect(again?.task).toEqual({ id: replay.id, payload: input.payload });
    await complete(t, again!);

    expect(await stored(original.id)).toEqual(before);
    expect((await sdk.tasks.get(replay.id))?.replayOf).toBe(original.id);
    expect((await sdk.tasks.get(original.id))?.replayOf).toBeNull();
    // The tasks list shows both; replayOf on a page of tasks is one read for the page.
    const page = await asTenant(platform.gateway, t)<{ tasks: { nodes: { id: string; replayOf: string | null }[] } }>(`{ tasks(filter: { type: "report" }) { nodes { id replayOf } } }`);
    expect(page.tasks.nodes).toEqual([
      { id: replay.id, replayOf: original.id },
      { id: original.id, replayOf: null },
    ]);
  });

  it("runs a DEAD PUSH task again once its endpoint is fixed, and a CANCELLED one: the endpoint gets the same payload under the new id", async () => {
    const t = await createTenant(platform.gateway);
    await asTenant(platform.gateway, t)(UPSERT, { i: { name: "hooks", mode: "PUSH", endpointUrl: `${receiver.url}/hook` } });
    broken.add("flaky");
    const dead = await submit(t, { type: "flaky", queue: "hooks", payload: { order: 7 } });
    await waitFor("the task to die", async () => (await statusOf(dead)) === "DEAD", 20_000);
    const cancelled = await submit(t, { type: "later", queue: "hooks", payload: { order: 8 }, delaySeconds: 3600 });
    await asTenant(platform.gateway, t)(`mutation ($id: ID!) { cancelTask(id: $id) { status } }`, { id: cancelled });
    const deadBefore = await stored(dead);
    const cancelledBefore = await stored(cancelled);

    broken.delete("flaky");
    const replayedDead = await replayAs(t, dead);
    expect(replayedDead.errors).toBeUndefined();
    const replayedCancelled = await replayAs(t, cancelled);
    expect(replayedCancelled.errors).toBeUndefined();
    const newDead = replayedDead.data!.replayTask;
    const newCancelled = replayedCancelled.data!.replayTask;
    expect(newDead).toMatchObject({ replayOf: dead, queue: "hooks", payload: { order: 7 } });
    expect(newCancelled).toMatchObject({ replayOf: cancelled, queue: "hooks", payload: { order: 8 } });

    await waitFor("both replays to succeed", async () => (await statusOf(newDead.id)) === "SUCCEEDED" && (await statusOf(newCancelled.id)) === "SUCCEEDED", 20_000);
    expect(pushedPayloads("flaky")).toEqual([
      { taskId: dead, type: "flaky", payload: { order: 7 }, attempt: 1 },
      { taskId: newDead.id, type: "flaky", payload: { order: 7 }, attempt: 1 },
    ]);
    expect(pushedPayloads("later")).toEqual([{ taskId: newCancelled.id, type: "later", payload: { order: 8 }, attempt: 1 }]);
    // The originals stay as they were: DEAD (still in the dead-letter queue) and CANCELLED.
    expect(await stored(dead)).toEqual(deadBefore);
    expect(await stored(cancelled)).toEqual(cancelledBefore);
    const deadLetters = await asTenant(platform.gateway, t)<{ deadLetterTasks: { nodes: { id: string }[] } }>(`{ deadLetterTasks { nodes { id } } }`);
    expect(deadLetters.deadLetterTasks.nodes.map((n) => n.id)).toEqual([dead]);
  });

  it("replays a schedule's SKIPPED run as a task of its own, outside the schedule", async () => {
    const t = await createTenant(platform.gateway);
    const schedule = await asTenant(platform.gateway, t)<{ createSchedule: { id: string } }>(
      `mutation { createSchedule(input: { name: "nightly", cron: "0 3 * * *", task: { type: "nightly", payload: { full: true } } }) { id } }`,
    );
    const scheduleId = schedule.createSchedule.id;
    // A run its overlap policy skipped, as the scheduler records one.
    const skipped = newId(IdPrefix.task);
    await pool().query(
      `INSERT INTO tasks (id, tenant_id, queue_id, type, payload, status, run_at, completed_at, max_attempts, backoff_strategy, backoff_delay_seconds,
                          backoff_jitter, timeout_seconds, schedule_id, last_error)
       SELECT $1, $2, q.id, 'nightly', '{"full": true}', 'SKIPPED', now() - interval '1 hour', now() - interval '1 hour', 3, 'EXPONENTIAL', 1, true, 60, $3,
              'overlap policy SKIP: the previous run was unfinished'
         FROM queues q WHERE q.tenant_id = $2 AND q.name = 'default'`,
      [skipped, t.tenantId, scheduleId],
    );
    const before = await stored(skipped);
    const replay = await replayAs(t, skipped);
    expect(replay.errors).toBeUndefined();
    expect(replay.data?.replayTask).toMatchObject({ status: "QUEUED", type: "nightly", payload: { full: true }, replayOf: skipped });
    expect((await stored(replay.data!.replayTask.id)).row).toMatchObject({ schedule_id: null, occurrence_key: null, last_error: null });
    expect(await stored(skipped)).toEqual(before);
    const runs = await asTenant(platform.gateway, t)<{ tasks: { totalCount: number } }>(`query ($s: ID) { tasks(filter: { scheduleId: $s }) { totalCount } }`, { s: scheduleId });
    expect(runs.tasks.totalCount).toBe(1);
  });

  it("is CONFLICT for a QUEUED or RUNNING task and a workflow's finished task, creating nothing", async () => {
    const t = await createTenant(platform.gateway);
    const running = await submit(t, { type: "r" });
    const lease = await leaseOne(t);
    expect(lease?.task.id).toBe(running);
    const queued = await submit(t, { type: "q" });
    await asTenant(platform.gateway, t)(UPSERT, { i: { name: "wfq", mode: "PULL" } });
    const wf = await asTenant(platform.gateway, t)<{ submitWorkflow: { tasks: { key: string; task: { id: string } }[] } }>(
      `mutation ($i: SubmitWorkflowInput!) { submitWorkflow(input: $i) { tasks { key task { id } } } }`,
      { i: { name: "w", tasks: [{ key: "a", type: "wa", queue: "wfq" }, { key: "b", type: "wb", queue: "wfq", dependsOn: ["a"] }] } },
    );
    const root = wf.submitWorkflow.tasks.find((x) => x.key === "a")!.task.id;
    const rootLease = await leaseOne(t, "wfq");
    expect(rootLease?.task.id).toBe(root);
    await complete(t, rootLease!);
    expect(await statusOf(root)).toBe("SUCCEEDED");

    const count = await taskCount(t.tenantId);
    for (const [id, status] of [
      [queued, "QUEUED"],
      [running, "RUNNING"],
    ] as const) {
      const refused = await replayAs(t, id);
      expect(codeOf(refused), status).toBe("CONFLICT");
      expect(refused.errors?.[0]?.message).toContain(status);
      expect(await statusOf(id)).toBe(status);
    }
    const workflowRefusal = await replayAs(t, root);
    expect(codeOf(workflowRefusal)).toBe("CONFLICT");
    expect(workflowRefusal.errors?.[0]?.message).toContain("workflow");
    expect(await taskCount(t.tenantId)).toBe(count);
  });

  it("is NOT_FOUND for another tenant's task, an unknown id, a task deleted with its queue and one pruned by retention; a read-only key is FORBIDDEN", async () => {
    const a = await createTenant(platform.gateway);
    const b = await createTenant(platform.gateway);
    await asTenant(platform.gateway, a)(UPSERT, { i: { name: "gone", mode: "PULL" } });
    const done = await submit(a, { type: "x" });
    await complete(a, (await leaseOne(a))!);
    const inGone = await submit(a, { type: "y", queue: "gone" });
    await complete(a, (await leaseOne(a, "gone"))!);
    await asTenant(platform.gateway, a)(`mutation { deleteQueue(name: "gone") }`);

    const bCount = await taskCount(b.tenantId);
    const aCount = await taskCount(a.tenantId);
    for (const [who, id] of [
      [b, done],
      [a, "task_00000000-0000-7000-8000-000000000000"],
      [a, "not-an-id"],
      [a, inGone],
    ] as const) {
      const refused = await replayAs(who, id);
      expect(codeOf(refused), id).toBe("NOT_FOUND");
      expect(refused.errors?.[0]?.message).toBe("Task not found");
    }
    const key = await asTenant(platform.gateway, a)<{ createApiKey: { secret: string } }>(`mutation { createApiKey(name: "r", scopes: ["read"]) { secret } }`);
    expect(codeOf(await gql(platform.gateway.url, REPLAY, { id: done }, key.createApiKey.secret))).toBe("FORBIDDEN");
    expect(await taskCount(a.tenantId)).toBe(aCount);
    // Retention takes finished tasks whole, payload included: a pruned task is as unknown (a 0-day retention prunes every finished task here).
    await pruneFinished(platform.database.db, 0);
    expect(await statusOf(done)).toBeUndefined();
    expect(codeOf(await replayAs(a, done))).toBe("NOT_FOUND");
    expect(await taskCount(a.tenantId)).toBe(0);
    expect(await taskCount(b.tenantId)).toBe(bCount);
  });

  it("answers a tenant at its maxPendingTasks as submitTask does, creating nothing", async () => {
    const t = await createTenant(platform.gateway, "capped", { maxPendingTasks: 1 });
    const done = await submit(t, { type: "d" });
    await complete(t, (await leaseOne(t))!);
    await submit(t, { type: "waiting", delaySeconds: 3600 });
    const count = await taskCount(t.tenantId);
    const replay = await replayAs(t, done);
    const plain = await gql(platform.gateway.url, `mutation { submitTask(input: { type: "d" }) { id } }`, {}, t.apiKey);
    expect(codeOf(replay)).toBe("QUOTA_EXCEEDED");
    expect({ message: replay.errors?.[0]?.message, extensions: replay.errors?.[0]?.extensions }).toEqual({
      message: plain.errors?.[0]?.message,
      extensions: plain.errors?.[0]?.extensions,
    });
    expect(await taskCount(t.tenantId)).toBe(count);
  });

  it("answers OVERLOADED past the platform backlog cap, as submitTask, creating nothing", async () => {
    const pending = async () => Number((await pool().query<{ n: string }>("SELECT coalesce(sum(pending), 0)::text AS n FROM tenant_counters")).rows[0]?.n);
    const capped = await platform.startAnother({ env: { GLOBAL_MAX_PENDING_TASKS: String((await pending()) + 2) } });
    const t = await createTenant(capped);
    const done = await submit(t, { type: "d" });
    await complete(t, (await leaseOne(t))!);
    const fill = () => gql(capped.url, `mutation { submitTasks(inputs: [{ type: "fill", delaySeconds: 3600 }]) { id } }`, {}, t.apiKey);
    await waitUntil(async () => codeOf(await fill()) === "OVERLOADED", 10_000, 200);
    const count = await taskCount(t.tenantId);
    const refused = await replayAs(t, done, capped);
    expect(refused.status).toBe(503);
    expect(refused.errors?.[0]?.extensions).toMatchObject({ code: "OVERLOADED" });
    expect(await taskCount(t.tenantId)).toBe(count);
  });

  it("takes a replay into a paused queue, where it waits until the queue resumes", async () => {
    const t = await createTenant(platform.gateway);
    await asTenant(platform.gateway, t)(UPSERT, { i: { name: "held", mode: "PULL" } });
    const done = await submit(t, { type: "h", queue: "held", payload: { n: 1 } });
    await complete(t, (await leaseOne(t, "held"))!);
    await asTenant(platform.gateway, t)(`mutation { pauseQueue(name: "held") { paused } }`);
    const replay = await replayAs(t, done);
    expect(replay.errors).toBeUndefined();
    expect(replay.data?.replayTask).toMatchObject({ status: "QUEUED", queue: "held", replayOf: done });
    expect(await leaseOne(t, "held")).toBeUndefined();
    await asTenant(platform.gateway, t)(`mutation { resumeQueue(name: "held") { paused } }`);
    expect((await leaseOne(t, "held"))?.task).toEqual({ id: replay.data!.replayTask.id, payload: { n: 1 } });
  });

  it("refuses a task its submission would not pass today, naming the task's field (not an argument replayTask lacks), creating nothing", async () => {
    const t = await createTenant(platform.gateway);
    // A private callback URL, accepted by a gateway with ALLOW_PRIVATE_TARGETS: replayed on one without it.
    const privateCallback = await submit(t, { type: "cb", callbackUrl: `${receiver.url}/callback` });
    await complete(t, (await leaseOne(t))!);
    // A payload past today's limit, as a row written under a larger one would hold it.
    const oversized = newId(IdPrefix.task);
    await pool().query(
      `INSERT INTO tasks (id, tenant_id, queue_id, type, payload, status, run_at, completed_at, max_attempts, backoff_strategy, backoff_delay_seconds,
                          backoff_jitter, timeout_seconds)
       SELECT $1, $2, q.id, 'big', jsonb_build_object('blob', repeat('x', $3)), 'SUCCEEDED', now(), now(), 3, 'EXPONENTIAL', 1, true, 60
         FROM queues q WHERE q.tenant_id = $2 AND q.name = 'default'`,
      [oversized, t.tenantId, MAX_PAYLOAD_BYTES + 1],
    );
    const strict = await platform.startAnother();
    const count = await taskCount(t.tenantId);
    for (const [id, gateway, field] of [
      [privateCallback, strict, "callbackUrl"],
      [oversized, platform.gateway, "payload"],
    ] as const) {
      const refused = await replayAs(t, id, gateway);
      expect(codeOf(refused), field).toBe("BAD_USER_INPUT");
      expect(refused.errors?.[0]?.message).toContain(`Task ${id} cannot be replayed as it was submitted`);
      const fieldErrors = refused.errors?.[0]?.extensions?.fieldErrors as { path: string }[];
      expect(fieldErrors.map((f) => f.path)).toEqual([field]);
    }
    expect(await taskCount(t.tenantId)).toBe(count);
  });

  it("counts a replay in tasklane_tasks_submitted_total, whose help names replayTask", async () => {
    const t = await createTenant(platform.gateway);
    const done = await submit(t, { type: "counted" });
    await complete(t, (await leaseOne(t))!);
    const metrics = async () => (await fetch(platform.gateway.url.replace("/graphql", "/metrics"))).text();
    const submitted = (text: string) => Number(/^tasklane_tasks_submitted_total(?:\{[^}]*\})? (\d+)/m.exec(text)?.[1]);
    const before = submitted(await metrics());
    expect((await replayAs(t, done)).errors).toBeUndefined();
    const after = await metrics();
    expect(submitted(after)).toBe(before + 1);
    expect(after).toMatch(/^# HELP tasklane_tasks_submitted_total .*replayTask/m);
  });

  it("the SDK's tasks.replay is not sent again after a lost answer: one new task", async () => {
    const t = await createTenant(platform.gateway);
    const done = await submit(t, { type: "once" });
    await complete(t, (await leaseOne(t))!);
    const losing = losingAnswers(/^\s*mutation ReplayTask\b/);
    const sdk = new TasklaneClient({ url: platform.gateway.url, apiKey: t.apiKey, fetch: losing.fetch });
    await sdkRejection(sdk.tasks.replay(done));
    expect(losing.sent()).toBe(1);
    const replays = await pool().query("SELECT id FROM tasks WHERE replay_of = $1", [done]);
    expect(replays.rowCount).toBe(1);
  });
});
