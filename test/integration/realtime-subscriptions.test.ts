/**
 * Subscriptions end to end with real processes: two gateways, the notifier
 * (event relay), a scheduler and a worker, a tenant's PUSH endpoint, and a
 * real graphql-ws client. A task submitted through gateway A is watched
 * through gateway B.
 *
 * Negative checks ("nothing else arrived") use a marker instead of a sleep:
 * the relay publishes in event-id order over one connection and each gateway
 * reads all channels over one connection, so once an event written later
 * has arrived, anything written before it would have arrived too.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApp, waitFor, type AppProcess } from "../helpers/app-process.js";
import { freePort } from "../helpers/free-port.js";
import { httpToWs, openSubscription, type LiveSubscription } from "../helpers/graphql-ws-client.js";
import { startReceiver, type HttpReceiver } from "../helpers/http-receiver.js";
import { newId } from "@tasklane/core";
import { createTestDatabase, createTestRedis, gql, type TestDatabase, type TestRedis } from "../helpers/platform.js";

interface TaskEventView {
  taskUpdated: { taskId: string; status: string; previousStatus: string | null; at: string; task: { id: string; status: string; queue: string } };
}

const EVENT = `taskId status previousStatus at task { id status queue }`;
const ADMIN_TOKEN = `admin-${randomBytes(16).toString("hex")}`;
let tdb: TestDatabase;
let redis: TestRedis;
let receiver: HttpReceiver;
let env: Record<string, string>;
const apps: AppProcess[] = [];
const gateways: { a: string; b: string } = { a: "", b: "" };
let keyA: string;
let keyB: string;
const open: LiveSubscription<unknown>[] = [];

async function startGatewayProcess(): Promise<string> {
  const port = await freePort();
  apps.push(startApp("gateway", { ...env, PORT: String(port), HOST: "127.0.0.1", ADMIN_TOKEN }));
  const url = `http://127.0.0.1:${port}`;
  await waitFor(`gateway on ${port}`, async () => (await fetch(`${url}/healthz`)).status === 200, 60_000, 200);
  return `${url}/graphql`;
}

async function newTenant(): Promise<string> {
  const res = await gql<{ createTenant: { apiKey: string } }>(
    gateways.a,
    `mutation ($i: CreateTenantInput!) { createTenant(input: $i) { apiKey } }`,
    { i: { name: `rt-${randomBytes(3).toString("hex")}` } },
    ADMIN_TOKEN,
  );
  if (!res.data) throw new Error(JSON.stringify(res.errors));
  return res.data.createTenant.apiKey;
}

async function submit(key: string, queue: string, type = "rt.job"): Promise<string> {
  const res = await gql<{ submitTask: { id: string } }>(gateways.a, `mutation ($i: SubmitTaskInput!) { submitTask(input: $i) { id } }`, { i: { type, queue } }, key);
  if (!res.data) throw new Error(JSON.stringify(res.errors));
  return res.data.submitTask.id;
}

async function cancel(key: string, id: string): Promise<void> {
  const res = await gql(gateways.a, `mutation ($id: ID!) { cancelTask(id: $id) { id } }`, { id }, key);
  expect(res.errors).toBeUndefined();
}

function subscribe<T = TaskEventView>(gateway: string, key: string | undefined, query: string, variables?: Record<string, unknown>): LiveSubscription<T> {
  const sub = openSubscription<T>(httpToWs(gateway), key === undefined ? undefined : `Bearer ${key}`, query, variables);
  open.push(sub as LiveSubscription<unknown>);
  return sub;
}

const taskUpdated = (args = "") => `subscription { taskUpdated${args} { ${EVENT} } }`;
const seen = (sub: LiveSubscription<TaskEventView>, taskId: string, status: string) => (vs: TaskEventView[]) =>
  vs.some((v) => v.taskUpdated.taskId === taskId && v.taskUpdated.status === status);

/** A subscription is live once an event submitted after it has arrived. */
async function live(sub: LiveSubscription<TaskEventView>, key: string): Promise<void> {
  await waitFor("subscription live", async () => {
    const probe = await submit(key, "default", "rt.probe");
    await sub.until("probe event", (vs) => vs.some((v) => v.taskUpdated.taskId === probe), 2_000).catch(() => null);
    return sub.values.some((v) => v.taskUpdated.taskId === probe);
  }, 30_000, 0);
  sub.values.length = 0;
}

beforeAll(async () => {
  tdb = await createTestDatabase("rtsub");
  redis = createTestRedis();
  receiver = await startReceiver((_req, res) => {
    res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');
  });
  env = {
    DATABASE_URL: tdb.url,
    REDIS_URL: redis.url,
    REDIS_KEY_PREFIX: redis.prefix,
    ALLOW_PRIVATE_TARGETS: "1",
    RECONCILE_INTERVAL_SECONDS: "1",
    LOG_LEVEL: "warn",
  };
  // Gateway A first: it applies the migrations the others find in place.
  gateways.a = await startGatewayProcess();
  // Two notifiers: one relays, the other stands by for the failover test.
  apps.push(startApp("notifier", env), startApp("notifier", env), startApp("scheduler", env), startApp("worker", env));
  gateways.b = await startGatewayProcess();
  keyA = await newTenant();
  keyB = await newTenant();
  const queue = await gql(gateways.a, `mutation ($i: UpsertQueueInput!) { upsertQueue(input: $i) { name } }`, {
    i: { name: "hooks", mode: "PUSH", endpointUrl: `${receiver.url}/run` },
  }, keyA);
  expect(queue.errors).toBeUndefined();
  const wfq = await gql(gateways.a, `mutation { upsertQueue(input: { name: "wfq", mode: PULL }) { name } }`, {}, keyA);
  expect(wfq.errors).toBeUndefined();
});

afterAll(async () => {
  await Promise.all(open.map((s) => s.close().catch(() => undefined)));
  await Promise.all(apps.map((a) => a.stop()));
  await receiver?.close();
  await redis?.cleanup();
  await tdb?.drop();
});

describe("taskUpdated across gateway processes", () => {
  it("streams a task submitted through gateway A to a subscriber on gateway B, in state order; tenant B hears nothing of it", async () => {
    const subA = subscribe(gateways.b, keyA, taskUpdated());
    const subB = subscribe(gateways.b, keyB, taskUpdated());
    await live(subA, keyA);
    await live(subB, keyB);

    const id = await submit(keyA, "hooks");
    const events = (await subA.until("SUCCEEDED", seen(subA, id, "SUCCEEDED"))).map((v) => v.taskUpdated).filter((e) => e.taskId === id);
    expect(events.map((e) => [e.previousStatus, e.status])).toEqual([
      [null, "QUEUED"],
      ["QUEUED", "RUNNING"],
      ["RUNNING", "SUCCEEDED"],
    ]);
    expect(events.every((e) => e.task.id === id && e.task.queue === "hooks")).toBe(true);
    expect(events.at(-1)?.task.status).toBe("SUCCEEDED");
    const times = events.map((e) => Date.parse(e.at));
    expect([...times].sort((x, y) => x - y)).toEqual(times);

    // Tenant B's marker is written after every event of A's task.
    const marker = await submit(keyB, "default", "rt.marker");
    await subB.until("tenant B's marker", seen(subB, marker, "QUEUED"));
    expect(subB.values.map((v) => v.taskUpdated.taskId)).toEqual([marker]);
  });

  it("another tenant's taskId is NOT_FOUND, exactly like an id that does not exist", async () => {
    const foreign = await submit(keyA, "default");
    const missing = newId("task");
    const answers = [];
    for (const taskId of [foreign, missing]) {
      const sub = subscribe(gateways.b, keyB, `subscription ($id: ID) { taskUpdated(taskId: $id) { ${EVENT} } }`, { id: taskId });
      await waitFor("an answer", () => sub.errors.length > 0 || sub.completed, 10_000);
      answers.push(sub.errors.map((e) => ({ code: e.extensions?.code, message: e.message })));
    }
    expect(answers[0]).toEqual([{ code: "NOT_FOUND", message: "Task not found" }]);
    expect(answers[1]).toEqual(answers[0]);
  });

  it("filters by taskId and by queue", async () => {
    const everything = subscribe(gateways.b, keyA, taskUpdated());
    await live(everything, keyA);
    const watched = await submit(keyA, "default");
    // Subscribed only once the watched task's own QUEUED event has gone by: the relay publishes
    // after the commit, and a subscription opened in between would rightly receive it.
    await everything.until("watched task queued", seen(everything, watched, "QUEUED"));
    const byTask = subscribe(gateways.b, keyA, `subscription ($id: ID) { taskUpdated(taskId: $id) { ${EVENT} } }`, { id: watched });
    const byQueue = subscribe(gateways.b, keyA, taskUpdated(`(queue: "default")`));
    await live(byQueue, keyA);

    const pushTask = await submit(keyA, "hooks");
    await everything.until("PUSH task done", seen(everything, pushTask, "SUCCEEDED"));
    const other = await submit(keyA, "default");
    await cancel(keyA, other);
    await cancel(keyA, watched); // the last event of all

    await byTask.until("watched task cancelled", seen(byTask, watched, "CANCELLED"));
    expect(byTask.values.map((v) => `${v.taskUpdated.taskId}:${v.taskUpdated.status}`)).toEqual([`${watched}:CANCELLED`]);
    await byQueue.until("watched task cancelled", seen(byQueue, watched, "CANCELLED"));
    expect(byQueue.values.every((v) => v.taskUpdated.task.queue === "default")).toBe(true);
    expect(byQueue.values.map((v) => v.taskUpdated.taskId)).toEqual([other, other, watched]);
  });

  it("an unknown queue is NOT_FOUND", async () => {
    const sub = subscribe(gateways.b, keyA, taskUpdated(`(queue: "no-such-queue")`));
    await waitFor("an answer", () => sub.errors.length > 0, 10_000);
    expect(sub.errors[0]?.extensions?.code).toBe("NOT_FOUND");
  });

  it("closes the connection with 4401 Unauthorized for an invalid or missing key", async () => {
    for (const key of ["tl_abcdefgh_" + "x".repeat(43), undefined]) {
      const sub = subscribe(gateways.b, key, taskUpdated());
      await waitFor("socket closed", () => sub.closeEvent, 10_000);
      expect(sub.closeEvent).toEqual({ code: 4401, reason: "Unauthorized" });
      expect(sub.values).toEqual([]);
    }
  });
});

describe("workflowUpdated", () => {
  it("emits the workflow, freshly loaded, whenever one of its tasks changes; another tenant's workflow is NOT_FOUND", async () => {
    const tasks = ["a", "b", "c", "d", "e"].map((key) => ({ key, type: `rt.${key}`, queue: "wfq" }));
    const res = await gql<{ submitWorkflow: { id: string } }>(
      gateways.a,
      `mutation ($i: SubmitWorkflowInput!) { submitWorkflow(input: $i) { id } }`,
      { i: { name: "rt-flow", tasks } },
      keyA,
    );
    const workflowId = res.data?.submitWorkflow.id;
    expect(workflowId, JSON.stringify(res.errors)).toBeDefined();
    const query = `subscription ($id: ID!) { workflowUpdated(workflowId: $id) { id status tasks { key task { status } } } }`;
    const foreign = subscribe<unknown>(gateways.b, keyB, query, { id: workflowId });
    await waitFor("an answer", () => foreign.errors.length > 0, 10_000);
    expect(foreign.errors[0]).toMatchObject({ extensions: { code: "NOT_FOUND" }, message: "Workflow not found" });

    type View = { workflowUpdated: { id: string; status: string; tasks: { key: string; task: { status: string } }[] } };
    const sub = subscribe<View>(gateways.b, keyA, query, { id: workflowId });
    // Each lease moves one task QUEUED -> RUNNING; the first leases may land before the subscription is live.
    await waitFor("a workflow update", async () => {
      const lease = await gql(gateways.a, `mutation { leaseTasks(queue: "wfq", workerId: "rt", max: 1) { task { id } } }`, {}, keyA);
      expect(lease.errors).toBeUndefined();
      await sub.until("an update", (vs) => vs.length > 0, 1_000).catch(() => null);
      return sub.values.length > 0;
    }, 20_000, 0);
    const first = sub.values[0]!.workflowUpdated;
    expect(first).toMatchObject({ id: workflowId, status: "RUNNING" });
    expect(first.tasks.some((t) => t.task.status === "RUNNING")).toBe(true);

    const cancelled = await gql(gateways.a, `mutation ($id: ID!) { cancelWorkflow(id: $id) { status } }`, { id: workflowId }, keyA);
    expect(cancelled.errors).toBeUndefined();
    await sub.until("CANCELLED", (vs) => vs.some((v) => v.workflowUpdated.status === "CANCELLED"));
    // Loaded per event, not from the first event's cache: no task is still waiting.
    const last = sub.values.at(-1)!.workflowUpdated;
    expect(last.tasks.map((t) => t.task.status)).not.toContain("QUEUED");
  });
});

describe("relay failover", () => {
  it("a SIGKILLed relay is replaced by the standby notifier; events written meanwhile still arrive, in order", async () => {
    const sub = subscribe(gateways.b, keyA, taskUpdated(`(queue: "default")`));
    await live(sub, keyA);
    // The relay's session names its process; the lock holder is the active one.
    const holder = await tdb.db.pool.query<{ application_name: string }>(
      `SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
        WHERE l.locktype = 'advisory' AND l.granted AND a.datname = current_database()`,
    );
    const pid = Number(holder.rows[0]?.application_name.split("/")[1]);
    const active = apps.find((a) => a.name === "notifier" && a.child.pid === pid);
    expect(active, `relay holder ${JSON.stringify(holder.rows)}`).toBeDefined();
    active?.kill("SIGKILL");
    await active?.exited;
    const ids = [await submit(keyA, "default"), await submit(keyA, "default")];
    for (const id of ids) await cancel(keyA, id);
    await sub.until("both cancelled", (vs) => ids.every((id) => vs.some((v) => v.taskUpdated.taskId === id && v.taskUpdated.status === "CANCELLED")));
    expect(sub.values.map((v) => `${v.taskUpdated.taskId}:${v.taskUpdated.status}`)).toEqual([
      `${ids[0]}:QUEUED`,
      `${ids[1]}:QUEUED`,
      `${ids[0]}:CANCELLED`,
      `${ids[1]}:CANCELLED`,
    ]);
  });
});
