/**
 * The whole platform on a real 3-master Redis Cluster (redis-server child
 * processes on loopback ports, started here): gateway, scheduler, worker and
 * notifier processes with REDIS_CLUSTER_NODES, a fresh database, and the
 * integration flow through the public API. REDIS_URL points at a closed port,
 * so any connection that ignored the cluster setting would fail the test.
 *
 * Every multi-key operation (BullMQ's scripts, the slot and token-bucket Lua
 * scripts, pipelines) must stay within one slot: each tenant's keys carry its
 * id as a hash tag, and the tenants here are spread over every master.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApp, waitFor, type AppProcess } from "../helpers/app-process.js";
import { createTenantVia, printAppLogsOnFailure, startGatewayProcess, type ProcessTenant } from "../helpers/ready-apps.js";
import { httpToWs, openSubscription } from "../helpers/graphql-ws-client.js";
import { startReceiver, type HttpReceiver } from "../helpers/http-receiver.js";
import { codeOf, createTestDatabase, gql, type TestDatabase } from "../helpers/platform.js";
import { startRedisCluster, type TestRedisCluster } from "../helpers/redis-cluster.js";
import { uniqueRedisPrefix } from "../helpers/test-database.js";

const ADMIN_TOKEN = `admin-${randomBytes(16).toString("hex")}`;
const prefix = uniqueRedisPrefix("clu");
let cluster: TestRedisCluster;
let tdb: TestDatabase;
let receiver: HttpReceiver;
let gatewayUrl: string;
const apps: AppProcess[] = [];
/** Tenants until every master holds at least one; `main` is the first. */
const tenants: ProcessTenant[] = [];
let main: ProcessTenant;

/** The receiver's behaviour per task type: status for an attempt, or "hold" (answer only when aborted). */
const behaviour = new Map<string, (attempt: number) => number | "hold">();
const inFlight = { now: 0, max: 0 };
const aborted = new Set<string>();

interface TaskView {
  id: string;
  status: string;
  runAt: string;
  attemptHistory: { number: number; outcome: string | null; startedAt: string }[];
}
const TASK = `id status runAt attemptHistory { number outcome startedAt }`;

const api = <T>(query: string, variables: Record<string, unknown> = {}, key = main.apiKey) => gql<T>(gatewayUrl, query, variables, key);

async function submit(input: Record<string, unknown>, key = main.apiKey): Promise<TaskView> {
  const res = await api<{ submitTask: TaskView }>(`mutation ($i: SubmitTaskInput!) { submitTask(input: $i) { ${TASK} } }`, { i: { queue: "work", ...input } }, key);
  if (!res.data?.submitTask) throw new Error(JSON.stringify(res.errors));
  return res.data.submitTask;
}

const read = async (id: string) => (await api<{ task: TaskView | null }>(`query ($id: ID!) { task(id: $id) { ${TASK} } }`, { id })).data?.task ?? null;

const until = (id: string, statuses: string[], timeoutMs = 30_000) =>
  waitFor(
    `task ${id} to reach ${statuses.join("/")}`,
    async () => {
      const t = await read(id);
      return t && statuses.includes(t.status) ? t : null;
    },
    timeoutMs,
    100,
  );

async function upsertQueue(key: string, input: Record<string, unknown>): Promise<void> {
  const res = await api(`mutation ($i: UpsertQueueInput!) { upsertQueue(input: $i) { name } }`, { i: input }, key);
  expect(res.errors).toBeUndefined();
}

/** Which master serves each slot, from CLUSTER SLOTS. */
async function slotOwners(): Promise<(slot: number) => number> {
  const ranges = await cluster.node(0).cluster("SLOTS");
  return (slot) => {
    const master = ranges.find(([from, to]) => slot >= from && slot <= to)?.[2];
    if (!master) throw new Error(`slot ${slot} is not served`);
    return cluster.nodes.findIndex((n) => n.port === Number(master[1]));
  };
}

beforeAll(async () => {
  [cluster, tdb] = await Promise.all([startRedisCluster(3), createTestDatabase("cluster")]);
  receiver = await startReceiver((req, res) => {
    if (req.path.startsWith("/hooks")) return void res.writeHead(204).end();
    const body = req.json as { taskId: string; type: string; attempt: number };
    const outcome = behaviour.get(body.type)?.(body.attempt) ?? 200;
    inFlight.now++;
    inFlight.max = Math.max(inFlight.max, inFlight.now);
    let timer: NodeJS.Timeout | undefined;
    const finish = () => {
      clearTimeout(timer);
      inFlight.now--;
    };
    if (outcome === "hold") {
      // Answers only if nobody aborts within 20 s; the worker aborts on a cancel signal.
      res.on("close", () => {
        if (!res.writableFinished) aborted.add(body.taskId);
        finish();
      });
      timer = setTimeout(() => res.writeHead(200).end("{}"), 20_000);
      return;
    }
    // A short pause so concurrency limits are visible at the receiver.
    timer = setTimeout(() => {
      finish();
      res.writeHead(outcome, { "content-type": "application/json" }).end(JSON.stringify({ type: body.type, attempt: body.attempt }));
    }, 50);
  });
  const env = {
    DATABASE_URL: tdb.url,
    REDIS_URL: "redis://127.0.0.1:1/0",
    REDIS_CLUSTER_NODES: cluster.seedList,
    REDIS_KEY_PREFIX: prefix,
    ALLOW_PRIVATE_TARGETS: "1",
    RECONCILE_INTERVAL_SECONDS: "1",
    WEBHOOK_RETRY_SCHEDULE: "0.2,0.5",
    LOG_LEVEL: "warn",
  };
  const gateway = await startGatewayProcess(env, ADMIN_TOKEN);
  apps.push(gateway.app, startApp("scheduler", env), startApp("worker", env), startApp("notifier", env));
  gatewayUrl = gateway.url;

  // Tenants until their hash tags cover every master (bounded: 3^-19 odds of needing more than 20).
  const owner = await slotOwners();
  const covered = new Set<number>();
  for (let i = 0; i < 20 && covered.size < cluster.nodes.length; i++) {
    const tenant = await createTenantVia(gatewayUrl, ADMIN_TOKEN, `cluster-${i}`);
    tenants.push(tenant);
    covered.add(owner(Number(await cluster.node(0).cluster("KEYSLOT", `{${tenant.tenantId}}`))));
  }
  main = tenants[0] as ProcessTenant;
  for (const t of tenants) await upsertQueue(t.apiKey, { name: "work", mode: "PUSH", endpointUrl: `${receiver.url}/tasks` });
}, 120_000);

afterAll(async () => {
  await Promise.all(apps.map((a) => a.stop()));
  await receiver?.close();
  await cluster?.stop();
  await tdb?.drop();
});

describe("the platform on a 3-master Redis Cluster", () => {
  printAppLogsOnFailure(apps);

  it("runs PUSH tasks of tenants whose keys live on every master", async () => {
    expect(tenants.length).toBeGreaterThanOrEqual(3);
    const ids: string[] = [];
    for (const t of tenants) {
      const res = await api<{ submitTasks: { id: string }[] }>(
        `mutation ($i: [SubmitTaskInput!]!) { submitTasks(inputs: $i) { id } }`,
        // The delayed one keeps every master's tenants in the reconciler's sweep (every second) for a while.
        { i: [...Array.from({ length: 10 }, (_, n) => ({ type: "spread", queue: "work", payload: { n } })), { type: "spread", queue: "work", delaySeconds: 3 }] },
        t.apiKey,
      );
      expect(res.errors).toBeUndefined();
      ids.push(...res.data!.submitTasks.map((s) => s.id));
    }
    await waitFor(
      "every spread task to succeed",
      async () => (await tdb.db.pool.query("SELECT count(*)::int AS n FROM tasks WHERE id = ANY($1) AND status = 'SUCCEEDED'", [ids])).rows[0].n === ids.length,
      40_000,
      200,
    );
    // Each master holds exactly the queue keys of the tenants its slots own.
    const owner = await slotOwners();
    for (let i = 0; i < cluster.nodes.length; i++) {
      const keys = await cluster.node(i).keys(`${prefix}:{*`);
      const tenantsHere = new Set(keys.map((k) => /^[^:]+:\{([^}]+)\}/.exec(k)?.[1]));
      expect(tenantsHere.size, `master ${i} holds tenant keys`).toBeGreaterThan(0);
      for (const tenantId of tenantsHere) {
        expect(owner(Number(await cluster.node(i).cluster("KEYSLOT", `{${tenantId}}`)))).toBe(i);
      }
    }
  });

  it("retries then succeeds, and runs a delayed task no earlier than its runAt", async () => {
    behaviour.set("flaky", (attempt) => (attempt < 3 ? 503 : 200));
    const flaky = await submit({ type: "flaky", maxAttempts: 5, backoff: { strategy: "LINEAR", delaySeconds: 0.2, jitter: false } });
    const delayed = await submit({ type: "delayed", delaySeconds: 1.5 });
    expect(delayed.status).toBe("SCHEDULED");
    const flakyDone = await until(flaky.id, ["SUCCEEDED", "DEAD"]);
    expect(flakyDone.attemptHistory.map((a) => a.outcome)).toEqual(["FAILED", "FAILED", "SUCCEEDED"]);
    const delayedDone = await until(delayed.id, ["SUCCEEDED", "DEAD"]);
    expect(delayedDone.status).toBe("SUCCEEDED");
    expect(new Date(delayedDone.attemptHistory[0]!.startedAt).getTime()).toBeGreaterThanOrEqual(new Date(delayed.runAt).getTime());
  });

  it("holds a queue's concurrency and start rate across the cluster (slot and token-bucket scripts)", async () => {
    await upsertQueue(main.apiKey, { name: "limited", mode: "PUSH", endpointUrl: `${receiver.url}/tasks`, concurrency: 1, rateLimit: { perSecond: 5, burst: 1 } });
    inFlight.max = 0;
    const res = await api<{ submitTasks: { id: string }[] }>(`mutation ($i: [SubmitTaskInput!]!) { submitTasks(inputs: $i) { id } }`, {
      i: Array.from({ length: 8 }, () => ({ type: "limited", queue: "limited" })),
    });
    const ids = res.data!.submitTasks.map((t) => t.id);
    const done = await Promise.all(ids.map((id) => until(id, ["SUCCEEDED", "DEAD"])));
    expect(done.every((t) => t.status === "SUCCEEDED")).toBe(true);
    expect(inFlight.max).toBe(1);
    // Burst 1 at 5/s: eight starts need at least 7 refills of 200 ms (a lower bound; load only stretches it).
    const starts = done.map((t) => new Date(t.attemptHistory[0]!.startedAt).getTime()).sort((a, b) => a - b);
    expect(starts[starts.length - 1]! - starts[0]!).toBeGreaterThanOrEqual(1_300);
  });

  it("refuses a tenant's requests past its API burst, with the bucket on its own master", async () => {
    const limited = await createTenantVia(gatewayUrl, ADMIN_TOKEN, "cluster-api-limited", { apiRatePerSecond: 0.1, apiBurst: 2 });
    const codes: (string | undefined)[] = [];
    for (let i = 0; i < 5; i++) codes.push(codeOf(await api(`{ queues { name } }`, {}, limited.apiKey)));
    // Burst 2 at one token per 10 s: two answers, then refusals (however slow the machine).
    expect(codes.slice(0, 2)).toEqual([undefined, undefined]);
    expect(codes.slice(2)).toContain("RATE_LIMITED");
    const master = (await slotOwners())(Number(await cluster.node(0).cluster("KEYSLOT", `{${limited.tenantId}}`)));
    expect(await cluster.node(master).exists(`${prefix}:{${limited.tenantId}}:api-bucket`)).toBe(1);
  });

  it("cancels a running task: the worker aborts its request (cancel signal over cluster pub/sub)", async () => {
    behaviour.set("hold", () => "hold");
    const task = await submit({ type: "hold", timeoutSeconds: 60 });
    await until(task.id, ["RUNNING"]);
    await waitFor("the endpoint to receive the held task", () => receiver.requests.some((r) => (r.json as { taskId?: string })?.taskId === task.id), 20_000);
    const cancelled = await api<{ cancelTask: { status: string } }>(`mutation ($id: ID!) { cancelTask(id: $id) { status } }`, { id: task.id });
    expect(cancelled.errors).toBeUndefined();
    await waitFor("the worker to abort the held request", () => aborted.has(task.id), 15_000);
    expect((await until(task.id, ["CANCELLED"])).status).toBe("CANCELLED");
  });

  it("wakes a long-polling PULL lease through the doorbell and completes it", async () => {
    const LEASE = `mutation { leaseTasks(queue: "default", workerId: "cluster-puller", max: 1, waitSeconds: 15) { leaseToken task { id } } }`;
    const pending = api<{ leaseTasks: { leaseToken: string; task: { id: string } }[] }>(LEASE);
    await new Promise((r) => setTimeout(r, 300));
    const task = await submit({ type: "pull", queue: "default" });
    const [lease] = (await pending).data?.leaseTasks ?? [];
    expect(lease?.task.id).toBe(task.id);
    const done = await api<{ completeTask: { status: string } }>(`mutation ($t: ID!, $l: String!) { completeTask(taskId: $t, leaseToken: $l, result: 1) { status } }`, {
      t: task.id,
      l: lease!.leaseToken,
    });
    expect(done.data?.completeTask.status).toBe("SUCCEEDED");
    expect(codeOf(await api(`mutation ($t: ID!, $l: String!) { completeTask(taskId: $t, leaseToken: $l) { id } }`, { t: task.id, l: lease!.leaseToken }))).toBe("CONFLICT");
  });

  it("delivers a webhook and a live subscription event for a task that succeeds", async () => {
    const hook = await api<{ createWebhook: { webhook: { id: string } } }>(`mutation ($i: CreateWebhookInput!) { createWebhook(input: $i) { webhook { id } } }`, {
      i: { url: `${receiver.url}/hooks`, events: ["task.succeeded"] },
    });
    expect(hook.errors).toBeUndefined();
    const sub = openSubscription<{ taskUpdated: { taskId: string; status: string } }>(
      httpToWs(gatewayUrl),
      `Bearer ${main.apiKey}`,
      `subscription { taskUpdated(queue: "work") { taskId status } }`,
    );
    try {
      // The subscription is live once an event of a task submitted after it arrives.
      let task = await submit({ type: "watched" });
      await waitFor(
        "a live subscription",
        async () => {
          if (sub.values.some((v) => v.taskUpdated.taskId === task.id)) return true;
          task = await submit({ type: "watched" });
          return false;
        },
        20_000,
        500,
      );
      await sub.until("the SUCCEEDED event", (vs) => vs.some((v) => v.taskUpdated.taskId === task.id && v.taskUpdated.status === "SUCCEEDED"), 20_000);
      const delivery = await waitFor(
        "the webhook delivery",
        () => receiver.requests.find((r) => r.path === "/hooks" && JSON.stringify(r.json).includes(task.id)),
        20_000,
      );
      expect(delivery.headers["webhook-id"]).toBeTruthy();
      expect(delivery.json).toMatchObject({ type: "task.succeeded" });
    } finally {
      await sub.close();
    }
  });

  it("logged no cross-slot error and no failed loop in any process so far", () => {
    for (const app of apps) {
      expect(app.output(), app.name).not.toMatch(/CROSSSLOT|same slot|loop failed|could not record/);
      expect(app.child.exitCode, app.name).toBeNull();
    }
  });

  // Last: a wipe legitimately fails the fetches in flight at that instant (their jobs vanish), which the log check above would flag.
  it("rebuilds every queue from Postgres when all masters lose their data", async () => {
    const res = await api<{ submitTasks: { id: string }[] }>(`mutation ($i: [SubmitTaskInput!]!) { submitTasks(inputs: $i) { id } }`, {
      i: Array.from({ length: 60 }, (_, n) => ({ type: "wiped", queue: "work", delaySeconds: n % 2 === 0 ? 1 : 0 })),
    });
    const ids = res.data!.submitTasks.map((t) => t.id);
    await Promise.all(cluster.nodes.map((_, i) => cluster.node(i).flushall()));
    await waitFor(
      "every task to succeed after the wipe",
      async () => (await tdb.db.pool.query("SELECT count(*)::int AS n FROM tasks WHERE id = ANY($1) AND status = 'SUCCEEDED'", [ids])).rows[0].n === ids.length,
      40_000,
      200,
    );
  });
});
