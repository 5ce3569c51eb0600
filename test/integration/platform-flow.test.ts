import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import { startApp, waitFor, type AppProcess } from "../helpers/app-process.js";
import { startReceiver, type HttpReceiver } from "../helpers/http-receiver.js";
import { codeOf, createTenant, createTestDatabase, gql, startGateway, type CreatedTenant, type StartedGateway, type TestDatabase } from "../helpers/platform.js";
import { REDIS_DB, redisUrl } from "../helpers/redis-dbs.js";
import { uniqueRedisPrefix } from "../helpers/test-database.js";

/**
 * The whole platform through its public API: a real gateway, scheduler and
 * worker processes, Postgres, Redis, and the tenant's HTTP endpoint.
 */
const REDIS_URL = redisUrl(REDIS_DB.gatewayFlow);
const TASK = `id type queue status attempts maxAttempts result lastError runAt cancelRequested attemptHistory { number outcome error leaseToken workerId }`;
let tdb: TestDatabase;
let gateway: StartedGateway;
let receiver: HttpReceiver;
let apps: AppProcess[] = [];
let tenant: CreatedTenant;
const prefix = uniqueRedisPrefix("flow");
const behaviour = new Map<string, (attempt: number) => number>();

interface TaskView {
  id: string;
  status: string;
  attempts: number;
  result: unknown;
  lastError: string | null;
  attemptHistory: { number: number; outcome: string | null; error: string | null; leaseToken: string | null; workerId: string | null }[];
}

const api = <T = Record<string, unknown>>(query: string, variables?: Record<string, unknown>, key = tenant.apiKey) => gql<T>(gateway.url, query, variables, key);

async function submit(input: Record<string, unknown>): Promise<TaskView> {
  const res = await api<{ submitTask: TaskView }>(`mutation ($i: SubmitTaskInput!) { submitTask(input: $i) { ${TASK} } }`, { i: { queue: "hooks", ...input } });
  if (!res.data?.submitTask) throw new Error(JSON.stringify(res.errors));
  return res.data.submitTask;
}

const read = async (id: string) => (await api<{ task: TaskView | null }>(`query ($id: ID!) { task(id: $id) { ${TASK} } }`, { id })).data?.task ?? null;

const until = (id: string, statuses: string[]) =>
  waitFor(`task ${id} to reach ${statuses.join("/")}`, async () => {
    const t = await read(id);
    return t && statuses.includes(t.status) ? t : null;
  });

const taskCount = async () => Number((await tdb.db.pool.query("SELECT count(*) AS n FROM tasks")).rows[0].n);

beforeAll(async () => {
  tdb = await createTestDatabase("flow");
  const flush = new Redis(REDIS_URL);
  await flush.flushdb();
  flush.disconnect();
  receiver = await startReceiver((req, res) => {
    const body = req.json as { type: string; attempt: number };
    const status = behaviour.get(body.type)?.(body.attempt) ?? 200;
    res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify({ handled: body.type, attempt: body.attempt }));
  });
  const env = { DATABASE_URL: tdb.url, REDIS_URL, REDIS_KEY_PREFIX: prefix, ALLOW_PRIVATE_TARGETS: "1", RECONCILE_INTERVAL_SECONDS: "1", LOG_LEVEL: "warn" };
  gateway = await startGateway({ databaseUrl: tdb.url, redis: { url: REDIS_URL, prefix, cleanup: async () => undefined }, env: { ALLOW_PRIVATE_TARGETS: "1" } });
  apps = [startApp("scheduler", env), startApp("worker", env)];
  tenant = await createTenant(gateway);
  const queue = await api(`mutation ($i: UpsertQueueInput!) { upsertQueue(input: $i) { name mode endpointUrl } }`, {
    i: { name: "hooks", mode: "PUSH", endpointUrl: `${receiver.url}/tasks` },
  });
  expect(queue.errors).toBeUndefined();
});

afterAll(async () => {
  await Promise.all(apps.map((a) => a.stop()));
  await gateway?.close();
  await receiver?.close();
  await tdb?.drop();
});

describe("PUSH tasks through the API", () => {
  it("runs a task to SUCCEEDED with its result and attempt history", async () => {
    const task = await submit({ type: "hello", payload: { to: "world" } });
    expect(task.status).toBe("QUEUED");
    const done = await until(task.id, ["SUCCEEDED"]);
    expect(done.result).toEqual({ handled: "hello", attempt: 1 });
    expect(done.attemptHistory).toHaveLength(1);
    expect(done.attemptHistory[0]).toMatchObject({ number: 1, outcome: "SUCCEEDED" });
    expect(done.attemptHistory[0]!.leaseToken).toMatch(/^lt_1_/);
  });

  it("retries then succeeds", async () => {
    behaviour.set("flaky", (attempt) => (attempt < 3 ? 503 : 200));
    const task = await submit({ type: "flaky", maxAttempts: 5, backoff: { strategy: "LINEAR", delaySeconds: 0.1, jitter: false } });
    const done = await until(task.id, ["SUCCEEDED", "DEAD"]);
    expect(done.status).toBe("SUCCEEDED");
    expect(done.attemptHistory.map((a) => a.outcome)).toEqual(["FAILED", "FAILED", "SUCCEEDED"]);
  });

  it("dead-letters a permanent failure, lists it, and redrives it with a fresh budget", async () => {
    let fixed = false;
    behaviour.set("poison", () => (fixed ? 200 : 400));
    const task = await submit({ type: "poison", maxAttempts: 3 });
    const dead = await until(task.id, ["DEAD"]);
    expect(dead.attempts).toBe(1);
    expect(dead.lastError).toContain("HTTP 400");
    const dlq = await api<{ deadLetterTasks: { nodes: { id: string }[]; totalCount: number } }>(`{ deadLetterTasks(queue: "hooks") { nodes { id } totalCount } }`);
    expect(dlq.data?.deadLetterTasks.nodes.map((n) => n.id)).toContain(task.id);
    fixed = true;
    const redriven = await api<{ redriveTask: TaskView }>(`mutation ($id: ID!) { redriveTask(id: $id) { ${TASK} } }`, { id: task.id });
    expect(redriven.data?.redriveTask).toMatchObject({ status: "QUEUED", attempts: 0 });
    const done = await until(task.id, ["SUCCEEDED"]);
    expect(done.attemptHistory.map((a) => a.outcome)).toEqual(["FAILED", "SUCCEEDED"]);
    const again = await api(`mutation ($id: ID!) { redriveTask(id: $id) { id } }`, { id: task.id });
    expect(codeOf(again)).toBe("CONFLICT");
  });

  it("cancels a waiting task: it never runs, and a second cancel is CONFLICT", async () => {
    const task = await submit({ type: "later", delaySeconds: 2 });
    expect(task.status).toBe("SCHEDULED");
    const cancelled = await api<{ cancelTask: TaskView }>(`mutation ($id: ID!) { cancelTask(id: $id) { ${TASK} } }`, { id: task.id });
    expect(cancelled.data?.cancelTask.status).toBe("CANCELLED");
    expect(codeOf(await api(`mutation ($id: ID!) { cancelTask(id: $id) { id } }`, { id: task.id }))).toBe("CONFLICT");
    await new Promise((r) => setTimeout(r, 2500));
    expect(receiver.requests.some((r) => (r.json as { taskId?: string }).taskId === task.id)).toBe(false);
  });

  it("refuses bad input with BAD_USER_INPUT or NOT_FOUND and writes nothing", async () => {
    const before = await taskCount();
    const cases: [Record<string, unknown>, string][] = [
      [{ type: "" }, "BAD_USER_INPUT"],
      [{ type: "x", maxAttempts: 0 }, "BAD_USER_INPUT"],
      [{ type: "x", delaySeconds: -1 }, "BAD_USER_INPUT"],
      [{ type: "x", runAt: "2026-01-01T00:00:00Z", delaySeconds: 5 }, "BAD_USER_INPUT"],
      [{ type: "x", payload: { big: "x".repeat(300_000) } }, "BAD_USER_INPUT"],
      [{ type: "x", queue: "missing" }, "NOT_FOUND"],
    ];
    for (const [input, code] of cases) {
      const res = await api(`mutation ($i: SubmitTaskInput!) { submitTask(input: $i) { id } }`, { i: { queue: "hooks", ...input } });
      expect(codeOf(res), JSON.stringify(input).slice(0, 80)).toBe(code);
    }
    const batch = await api(`mutation ($i: [SubmitTaskInput!]!) { submitTasks(inputs: $i) { id } }`, {
      i: [{ type: "ok", queue: "hooks" }, { type: "", queue: "hooks" }],
    });
    expect(codeOf(batch)).toBe("BAD_USER_INPUT");
    expect(await taskCount()).toBe(before);
  });

  it("loses nothing when Redis is wiped mid-run", async () => {
    const inputs = Array.from({ length: 300 }, (_, i) => ({ type: "wipe", queue: "hooks", delaySeconds: i % 3 === 0 ? 1 : 0 }));
    const res = await api<{ submitTasks: { id: string }[] }>(`mutation ($i: [SubmitTaskInput!]!) { submitTasks(inputs: $i) { id } }`, { i: inputs });
    const ids = res.data!.submitTasks.map((t) => t.id);
    const flush = new Redis(REDIS_URL);
    await flush.flushdb();
    flush.disconnect();
    await waitFor(
      "all wiped-run tasks to succeed",
      async () => {
        const n = await tdb.db.pool.query("SELECT count(*)::int AS n FROM tasks WHERE id = ANY($1) AND status = 'SUCCEEDED'", [ids]);
        return n.rows[0].n === ids.length;
      },
      60_000,
      200,
    );
  });
});

describe("PULL leases through the API", () => {
  const LEASE = `mutation ($w: String!, $max: Int, $wait: Float, $ls: Int) { leaseTasks(queue: "default", workerId: $w, max: $max, waitSeconds: $wait, leaseSeconds: $ls) { leaseToken leaseExpiresAt task { id type attempts status } } }`;
  type Leases = { leaseTasks: { leaseToken: string; leaseExpiresAt: string; task: { id: string; type: string; attempts: number; status: string } }[] };

  it("leases, heartbeats and completes; a stale token is refused and changes nothing", async () => {
    await submit({ type: "pull-1", queue: "default" });
    const [lease] = (await api<Leases>(LEASE, { w: "w1", max: 5 })).data!.leaseTasks;
    expect(lease!.task).toMatchObject({ type: "pull-1", status: "RUNNING", attempts: 1 });
    const hb = await api<{ heartbeat: { cancelRequested: boolean; leaseExpiresAt: string } }>(
      `mutation ($t: ID!, $l: String!) { heartbeat(taskId: $t, leaseToken: $l, extendSeconds: 60) { cancelRequested leaseExpiresAt } }`,
      { t: lease!.task.id, l: lease!.leaseToken },
    );
    expect(hb.data?.heartbeat.cancelRequested).toBe(false);
    expect(new Date(hb.data!.heartbeat.leaseExpiresAt).getTime()).toBeGreaterThan(new Date(lease!.leaseExpiresAt).getTime());
    const forged = lease!.leaseToken.replace(/.$/, (c) => (c === "A" ? "B" : "A"));
    const stale = await api(`mutation ($t: ID!, $l: String!) { completeTask(taskId: $t, leaseToken: $l, result: 1) { id } }`, { t: lease!.task.id, l: forged });
    expect(codeOf(stale)).toBe("CONFLICT");
    expect((await read(lease!.task.id))!.status).toBe("RUNNING");
    const done = await api<{ completeTask: TaskView }>(`mutation ($t: ID!, $l: String!) { completeTask(taskId: $t, leaseToken: $l, result: {ok: true}) { ${TASK} } }`, {
      t: lease!.task.id,
      l: lease!.leaseToken,
    });
    expect(done.data?.completeTask).toMatchObject({ status: "SUCCEEDED", result: { ok: true } });
    const twice = await api(`mutation ($t: ID!, $l: String!) { completeTask(taskId: $t, leaseToken: $l) { id } }`, { t: lease!.task.id, l: lease!.leaseToken });
    expect(codeOf(twice)).toBe("CONFLICT");
  });

  it("long-polls with waitSeconds and returns as soon as a task arrives", async () => {
    const started = Date.now();
    const pending = api<Leases>(LEASE, { w: "w2", max: 10, wait: 10 });
    await new Promise((r) => setTimeout(r, 300));
    await submit({ type: "pull-late", queue: "default" });
    const leases = (await pending).data!.leaseTasks;
    expect(leases.map((l) => l.task.type)).toEqual(["pull-late"]);
    expect(Date.now() - started).toBeLessThan(8_000);
    const empty = await api<Leases>(LEASE, { w: "w2", wait: 0.3 });
    expect(empty.data?.leaseTasks).toEqual([]);
  });

  it("a long poll wakes when a delayed task falls due, though no doorbell rings for it", async () => {
    // Re-checking every 200 ms is at least 80 ms late on every try: the task falls due between two re-checks, whatever
    // their drift. Sleeping until the due time is late only by what the machine's load adds, so the best of a few
    // tries separates the two where a single try on a loaded machine does not.
    const lateness: number[] = [];
    for (let attempt = 0; attempt < 5 && !lateness.some((ms) => ms < 80); attempt++) {
      const runAt = Date.now() + 320;
      await submit({ type: "pull-delayed", queue: "default", runAt: new Date(runAt).toISOString() });
      const leases = (await api<Leases>(LEASE, { w: "w3", max: 10, wait: 10 })).data!.leaseTasks;
      const leasedAt = Date.now();
      expect(leases.map((l) => l.task.type)).toEqual(["pull-delayed"]);
      expect(leasedAt).toBeGreaterThanOrEqual(runAt);
      lateness.push(leasedAt - runAt);
      const done = await api(`mutation ($t: ID!, $l: String!) { completeTask(taskId: $t, leaseToken: $l) { id } }`, { t: leases[0]!.task.id, l: leases[0]!.leaseToken });
      expect(done.errors).toBeUndefined();
    }
    expect(Math.min(...lateness)).toBeLessThan(80);
  });

  it("failTask(retryable: false) dead-letters; a retryable failure is leased again", async () => {
    await submit({ type: "pull-fail", queue: "default", maxAttempts: 3, backoff: { strategy: "FIXED", delaySeconds: 0.1, jitter: false } });
    const [l1] = (await api<Leases>(LEASE, { w: "w3" })).data!.leaseTasks;
    const failed = await api<{ failTask: TaskView }>(`mutation ($t: ID!, $l: String!) { failTask(taskId: $t, leaseToken: $l, error: "boom") { ${TASK} } }`, {
      t: l1!.task.id,
      l: l1!.leaseToken,
    });
    expect(failed.data?.failTask.status).toBe("RETRYING");
    const [l2] = (await api<Leases>(LEASE, { w: "w3", wait: 3 })).data!.leaseTasks;
    expect(l2!.task).toMatchObject({ id: l1!.task.id, attempts: 2 });
    const dead = await api<{ failTask: TaskView }>(
      `mutation ($t: ID!, $l: String!) { failTask(taskId: $t, leaseToken: $l, error: "fatal", retryable: false) { ${TASK} } }`,
      { t: l2!.task.id, l: l2!.leaseToken },
    );
    expect(dead.data?.failTask).toMatchObject({ status: "DEAD", lastError: "fatal" });
  });

  it("completeTasks records a batch in one call and refuses each bad item on its own", async () => {
    const COMPLETE_MANY = `mutation ($c: [TaskCompletionInput!]!) { completeTasks(completions: $c) { taskId accepted code task { id status result } } }`;
    type Outcomes = { completeTasks: { taskId: string; accepted: boolean; code: string | null; task: { id: string; status: string; result: unknown } | null }[] };
    for (let i = 0; i < 3; i++) await submit({ type: `batch-${i}`, queue: "default" });
    const leases = (await api<Leases>(LEASE, { w: "wb", max: 3 })).data!.leaseTasks;
    expect(leases).toHaveLength(3);
    const [a, b, c] = leases as [Leases["leaseTasks"][0], Leases["leaseTasks"][0], Leases["leaseTasks"][0]];
    const other = await createTenant(gateway);
    const foreign = await gql<Outcomes>(gateway.url, COMPLETE_MANY, { c: [{ taskId: a.task.id, leaseToken: a.leaseToken, result: 1 }] }, other.apiKey);
    expect(foreign.data?.completeTasks).toEqual([{ taskId: a.task.id, accepted: false, code: "NOT_FOUND", task: null }]);
    const duplicate = await api(COMPLETE_MANY, { c: [{ taskId: a.task.id, leaseToken: a.leaseToken }, { taskId: a.task.id, leaseToken: a.leaseToken }] });
    expect(codeOf(duplicate)).toBe("BAD_USER_INPUT");
    expect((await read(a.task.id))!.status).toBe("RUNNING");
    const res = await api<Outcomes>(COMPLETE_MANY, {
      c: [
        { taskId: a.task.id, leaseToken: a.leaseToken, result: { n: 1 } },
        { taskId: b.task.id, leaseToken: b.leaseToken.replace(/.$/, (ch) => (ch === "A" ? "B" : "A")), result: 2 },
        { taskId: c.task.id, leaseToken: c.leaseToken, result: "x".repeat(300_000) },
      ],
    });
    expect(res.data?.completeTasks.map((o) => [o.taskId, o.accepted, o.code])).toEqual([
      [a.task.id, true, null],
      [b.task.id, false, "CONFLICT"],
      [c.task.id, false, "BAD_USER_INPUT"],
    ]);
    expect(res.data?.completeTasks[0]!.task).toEqual({ id: a.task.id, status: "SUCCEEDED", result: { n: 1 } });
    expect((await read(b.task.id))!.status).toBe("RUNNING");
    expect((await read(c.task.id))!.status).toBe("RUNNING");
    const again = await api<Outcomes>(COMPLETE_MANY, { c: [{ taskId: a.task.id, leaseToken: a.leaseToken }, { taskId: b.task.id, leaseToken: b.leaseToken }] });
    expect(again.errors).toBeUndefined();
    expect(again.data?.completeTasks.map((o) => o.code)).toEqual(["CONFLICT", null]);
    expect((await read(b.task.id))!.status).toBe("SUCCEEDED");

    // A result nested deeper than a payload may be is refused the same way, alone (the limit is 32 levels).
    let deep: unknown = 1;
    for (let i = 0; i < 40; i++) deep = { d: deep };
    const tooDeep = await api<Outcomes>(COMPLETE_MANY, { c: [{ taskId: c.task.id, leaseToken: c.leaseToken, result: deep }] });
    expect(tooDeep.data?.completeTasks.map((o) => [o.accepted, o.code])).toEqual([[false, "BAD_USER_INPUT"]]);
    const single = await api(`mutation ($t: ID!, $l: String!, $r: JSON) { completeTask(taskId: $t, leaseToken: $l, result: $r) { id } }`, { t: c.task.id, l: c.leaseToken, r: deep });
    expect(codeOf(single)).toBe("BAD_USER_INPUT");
    expect((await read(c.task.id))!.status).toBe("RUNNING");
  });

  it("completeTasks without `task` in the selection records the same (the statement then answers with ids only)", async () => {
    const SETTLE_MANY = `mutation ($c: [TaskCompletionInput!]!) { completeTasks(completions: $c) { taskId accepted code } }`;
    type Settled = { completeTasks: { taskId: string; accepted: boolean; code: string | null }[] };
    for (let i = 0; i < 2; i++) await submit({ type: `settle-${i}`, queue: "default" });
    const [a, b] = (await api<Leases>(LEASE, { w: "ws", max: 2 })).data!.leaseTasks as [Leases["leaseTasks"][0], Leases["leaseTasks"][0]];
    const res = await api<Settled>(SETTLE_MANY, {
      c: [
        { taskId: a.task.id, leaseToken: a.leaseToken, result: { settled: true } },
        { taskId: b.task.id, leaseToken: b.leaseToken.replace(/.$/, (ch) => (ch === "A" ? "B" : "A")) },
      ],
    });
    expect(res.data?.completeTasks).toEqual([
      { taskId: a.task.id, accepted: true, code: null },
      { taskId: b.task.id, accepted: false, code: "CONFLICT" },
    ]);
    expect(await read(a.task.id)).toMatchObject({ status: "SUCCEEDED", result: { settled: true } });
    expect((await read(b.task.id))!.status).toBe("RUNNING");
    const again = await api<Settled>(SETTLE_MANY, { c: [{ taskId: a.task.id, leaseToken: a.leaseToken }, { taskId: b.task.id, leaseToken: b.leaseToken }] });
    expect(again.data?.completeTasks.map((o) => o.code)).toEqual(["CONFLICT", null]);
    expect((await read(b.task.id))!.status).toBe("SUCCEEDED");
  });

  it("refuses to lease from a PUSH queue and answers NOT_FOUND for an unknown one", async () => {
    expect(codeOf(await api(`mutation { leaseTasks(queue: "hooks", workerId: "w") { leaseToken } }`))).toBe("BAD_USER_INPUT");
    expect(codeOf(await api(`mutation { leaseTasks(queue: "nope", workerId: "w") { leaseToken } }`))).toBe("NOT_FOUND");
  });
});

describe("schedules through the API", () => {
  const CREATE = `mutation ($i: CreateScheduleInput!) { createSchedule(input: $i) { id name cron timezone version nextRunAt enabled misfirePolicy overlapPolicy } }`;

  it("validates cron and time zone", async () => {
    for (const input of [
      { cron: "* * *", timezone: "UTC" },
      { cron: "61 * * * *", timezone: "UTC" },
      { cron: "* * * * *", timezone: "Mars/Olympus" },
      { cron: "* * * * *; DROP TABLE tasks", timezone: "UTC" },
    ]) {
      const res = await api(CREATE, { i: { name: `bad-${Math.random()}`, task: { type: "t" }, ...input } });
      expect(codeOf(res)).toBe("BAD_USER_INPUT");
    }
    expect(codeOf(await api(CREATE, { i: { name: "noq", cron: "* * * * *", task: { type: "t", queue: "missing" } } }))).toBe("NOT_FOUND");
  });

  it("runs a 6-field schedule on each occurrence, triggers on demand, and lists runs newest first", async () => {
    const created = await api<{ createSchedule: { id: string; version: number; nextRunAt: string; timezone: string } }>(CREATE, {
      i: { name: "every-second", cron: "* * * * * *", timezone: "Europe/Berlin", task: { type: "cron-tick", queue: "hooks" } },
    });
    const schedule = created.data!.createSchedule;
    expect(schedule).toMatchObject({ version: 1, timezone: "Europe/Berlin" });
    const RUNS = `query ($id: ID!) { schedule(id: $id) { runs(first: 50) { id status runAt scheduleId } } }`;
    const runs = await waitFor(
      "three successful runs",
      async () => {
        const r = (await api<{ schedule: { runs: { status: string; runAt: string; scheduleId: string }[] } }>(RUNS, { id: schedule.id })).data?.schedule.runs ?? [];
        return r.filter((x) => x.status === "SUCCEEDED").length >= 3 ? r : null;
      },
      20_000,
      200,
    );
    const times = runs.map((r) => new Date(r.runAt).getTime());
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    expect(runs.every((r) => r.scheduleId === schedule.id)).toBe(true);
    const triggered = await api<{ triggerSchedule: { scheduleId: string; type: string } }>(`mutation ($id: ID!) { triggerSchedule(id: $id) { scheduleId type } }`, {
      id: schedule.id,
    });
    expect(triggered.data?.triggerSchedule).toEqual({ scheduleId: schedule.id, type: "cron-tick" });
    const updated = await api<{ updateSchedule: { version: number; enabled: boolean; nextRunAt: string | null } }>(
      `mutation ($id: ID!) { updateSchedule(id: $id, input: { enabled: false }) { version enabled nextRunAt } }`,
      { id: schedule.id },
    );
    expect(updated.data?.updateSchedule).toEqual({ version: 2, enabled: false, nextRunAt: null });
    expect((await api<{ deleteSchedule: boolean }>(`mutation ($id: ID!) { deleteSchedule(id: $id) }`, { id: schedule.id })).data?.deleteSchedule).toBe(true);
    expect((await api<{ schedule: unknown }>(`query ($id: ID!) { schedule(id: $id) { id } }`, { id: schedule.id })).data?.schedule).toBeNull();
  });
});
