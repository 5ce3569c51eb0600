/**
 * PUSH submissions while Redis is away: every one is answered and committed,
 * none of their dispatches waits in the gateway's ioredis offline queue (QA:
 * they piled there, one more per submission, and flooded Redis when it came
 * back), and once Redis is back the outbox and horizon promotion deliver each
 * task, which runs exactly once. The outage is the kind that holds a client
 * between "connect" and "ready" (a Redis hung or still loading its data,
 * here a proxy that accepts connections and answers nothing): the gateway's
 * old guard only refused a client that was "reconnecting". A real scheduler
 * and worker run behind the same proxy; the gateway runs in this process so
 * the test can read its client's offline queue.
 */
import { createRedis, type RedisClient } from "@tasklane/queue";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor, type AppProcess } from "../helpers/app-process.js";
import { startReceiver, type HttpReceiver } from "../helpers/http-receiver.js";
import { createTenant, createTestRedis, gql, startGateway, type StartedGateway, type TestRedis } from "../helpers/platform.js";
import { printAppLogsOnFailure, startServingApp } from "../helpers/ready-apps.js";
import { startTcpProxy, type TcpProxy } from "../helpers/tcp-proxy.js";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";

/** Tasks submitted during the outage, due now: 40 in one batch and 60 one per call. */
const BATCHED = 40;
const SINGLES = 60;
/** Tasks due a few seconds later, beyond the 1 s dispatch horizon: horizon promotion hands them over. */
const DELAYED = 5;
const DELAY_SECONDS = 3;
/** REDIS_SOCKET_TIMEOUT_SECONDS for every client here: short, so a silenced connection is dropped soon. */
const SOCKET_TIMEOUT_SECONDS = 2;

let tdb: TestDatabase;
let testRedis: TestRedis;
let proxy: TcpProxy;
let redis: RedisClient;
let gateway: StartedGateway;
let receiver: HttpReceiver;
const apps: AppProcess[] = [];

beforeAll(async () => {
  tdb = await createTestDatabase("pushrdout");
  testRedis = createTestRedis();
  proxy = await startTcpProxy("127.0.0.1", Number(new URL(testRedis.url).port || 6379));
  const redisUrl = proxy.rewrite(testRedis.url);
  receiver = await startReceiver();
  redis = createRedis({ url: redisUrl, socketTimeoutMs: SOCKET_TIMEOUT_SECONDS * 1000 }, "test-gateway");
  redis.on("error", () => undefined);
  const shared = {
    DATABASE_URL: tdb.url,
    REDIS_URL: redisUrl,
    REDIS_KEY_PREFIX: testRedis.prefix,
    REDIS_SOCKET_TIMEOUT_SECONDS: String(SOCKET_TIMEOUT_SECONDS),
    DISPATCH_HORIZON_SECONDS: "1",
    LOG_LEVEL: "warn",
  };
  gateway = await startGateway({ databaseUrl: tdb.url, redis: testRedis, env: { ...shared, ALLOW_PRIVATE_TARGETS: "1" }, deps: { redis } });
  // The reconciler's sweep would find the handed-over tasks that never reached Redis, but only 10 minutes on:
  // everything here must come from the outbox and horizon promotion.
  apps.push((await startServingApp("scheduler", { ...shared, RECONCILE_INTERVAL_SECONDS: "600" })).app);
  apps.push((await startServingApp("worker", { ...shared, ALLOW_PRIVATE_TARGETS: "1" })).app);
});

afterAll(async () => {
  await Promise.all(apps.map((app) => app.stop(10_000)));
  await gateway?.close();
  redis?.disconnect();
  await receiver?.close();
  await proxy?.close();
  await testRedis?.cleanup();
  await tdb?.drop();
});

/** The commands waiting in the gateway client's offline queue (ioredis's private `offlineQueue`). */
function offlineCommands(): { name: string; args: unknown[] }[] {
  const queue = (redis as unknown as { offlineQueue: { toArray(): { command: { name: string; args: unknown[] } }[] } }).offlineQueue;
  return queue.toArray().map((item) => ({ name: item.command.name, args: item.command.args }));
}

describe("PUSH dispatch during a Redis outage", () => {
  printAppLogsOnFailure(apps);

  it("answers every submission, queues none of their dispatches offline, and runs each task exactly once when Redis is back", async () => {
    const { tenantId, apiKey } = await createTenant(gateway, "push-outage");
    const call = (query: string, variables?: Record<string, unknown>) => gql<Record<string, any>>(gateway.url, query, variables, apiKey);
    const upsert = await call(`mutation ($url: String!) { upsertQueue(input: {name: "p", mode: PUSH, endpointUrl: $url}) { name } }`, { url: `${receiver.url}/hook` });
    expect(upsert.errors).toBeUndefined();
    // The platform runs PUSH tasks before the outage (the worker knows the queue).
    const before = await call(`mutation { submitTask(input: {type: "before", queue: "p", payload: {}}) { id } }`);
    const beforeId = before.data?.submitTask.id as string;
    await waitFor("the first task to run", () => receiver.requests.some((r) => (r.json as { taskId?: string }).taskId === beforeId), 30_000, 50);

    await proxy.hang();
    // The client reconnects into the hang: connected, never ready.
    await waitFor("the gateway's client to sit in 'connect'", () => redis.status === "connect", 15_000, 20);

    const ids: string[] = [];
    const answers: { id: string; status: string }[] = [];
    const batch = await call(`mutation ($inputs: [SubmitTaskInput!]!) { submitTasks(inputs: $inputs) { id status } }`, {
      inputs: Array.from({ length: BATCHED }, (_, i) => ({ type: `batch-${i}`, queue: "p", payload: { i } })),
    });
    expect(batch.errors).toBeUndefined();
    answers.push(...batch.data?.submitTasks);
    for (let from = 0; from < SINGLES + DELAYED; from += 10) {
      const round = await Promise.all(
        Array.from({ length: Math.min(10, SINGLES + DELAYED - from) }, (_, k) => {
          const n = from + k;
          const input = n < SINGLES ? { type: `single-${n}`, queue: "p", payload: { n } } : { type: `delayed-${n}`, queue: "p", payload: { n }, delaySeconds: DELAY_SECONDS };
          return call(`mutation ($input: SubmitTaskInput!) { submitTask(input: $input) { id status } }`, { input });
        }),
      );
      for (const res of round) {
        expect(res.errors).toBeUndefined();
        answers.push(res.data?.submitTask);
      }
    }
    ids.push(...answers.map((a) => a.id));
    expect(new Set(ids).size).toBe(BATCHED + SINGLES + DELAYED);
    expect(answers.map((a) => a.status).every((s) => s === "QUEUED" || s === "SCHEDULED")).toBe(true);

    // Health probes answer 503 and send nothing to a connection that is not there.
    const readyz = new URL("/readyz", gateway.url).toString();
    expect((await Promise.all(Array.from({ length: 5 }, () => fetch(readyz)))).map((r) => r.status)).toEqual([503, 503, 503, 503, 503]);

    // Nothing of theirs waits in the offline queue (before the fix: a dispatch script call per submission,
    // each holding its jobs, and whatever else waits there does not grow with the submissions), nor a probe's PING.
    // Still held by the hang, never ready: each connection's ready check times out after
    // REDIS_SOCKET_TIMEOUT_SECONDS and the client connects again, so it may be between two connections.
    expect(["connect", "reconnecting", "connecting"]).toContain(redis.status);
    const offline = offlineCommands();
    expect(offline.filter((c) => c.name === "ping")).toEqual([]);
    const mentioning = offline.filter((c) => ids.some((id) => JSON.stringify(c.args).includes(id)));
    expect(mentioning.map((c) => c.name)).toEqual([]);
    expect(offline.length).toBeLessThan(10);

    // The delayed tasks come within the horizon while Redis is still away: horizon promotion must leave them.
    await new Promise((r) => setTimeout(r, DELAY_SECONDS * 1000 + 2_000));
    const during = await tdb.db.pool.query<{ status: string; n: number }>("SELECT status::text, count(*)::int AS n FROM tasks WHERE tenant_id = $1 AND id = ANY($2) GROUP BY 1", [tenantId, ids]);
    expect(during.rows.filter((r) => r.status !== "QUEUED" && r.status !== "SCHEDULED")).toEqual([]);
    expect(receiver.requests.filter((r) => ids.includes((r.json as { taskId: string }).taskId))).toEqual([]);

    const restoredAt = Date.now();
    await proxy.restore();
    await waitFor(
      "every task submitted during the outage SUCCEEDED",
      async () => {
        const { rows } = await tdb.db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM tasks WHERE tenant_id = $1 AND id = ANY($2) AND status = 'SUCCEEDED'", [tenantId, ids]);
        return rows[0]!.n === ids.length;
      },
      60_000,
      100,
    );
    const { rows } = await tdb.db.pool.query<{ id: string; attempts: number }>("SELECT id, attempts FROM tasks WHERE tenant_id = $1 AND id = ANY($2)", [tenantId, ids]);
    expect(rows.filter((r) => r.attempts !== 1)).toEqual([]);
    const calls = new Map<string, number>();
    for (const r of receiver.requests) {
      const taskId = (r.json as { taskId: string }).taskId;
      calls.set(taskId, (calls.get(taskId) ?? 0) + 1);
    }
    expect(ids.filter((id) => calls.get(id) !== 1)).toEqual([]);
    console.log(`${ids.length} submitted during the outage, ${offline.length} commands offline; all SUCCEEDED ${Date.now() - restoredAt} ms after Redis came back`);
  }, 150_000);

  it("drops connections the network lost without a reset, and runs what is submitted afterwards", async () => {
    const { tenantId, apiKey } = await createTenant(gateway, "push-silenced");
    const call = (query: string, variables?: Record<string, unknown>) => gql<Record<string, any>>(gateway.url, query, variables, apiKey);
    await call(`mutation ($url: String!) { upsertQueue(input: {name: "s", mode: PUSH, endpointUrl: $url}) { name } }`, { url: `${receiver.url}/hook` });
    const warm = await call(`mutation { submitTask(input: {type: "warm", queue: "s", payload: {}}) { id } }`);
    const warmId = warm.data?.submitTask.id as string;
    await waitFor("a task to run before the partition", () => receiver.requests.some((r) => (r.json as { taskId?: string }).taskId === warmId), 30_000, 50);

    // Every open connection (the gateway's, the scheduler's, the worker's) now carries nothing and is never
    // reset: each client still says "ready". A new connection goes through.
    proxy.silence();
    expect(redis.status).toBe("ready");
    const batch = await call(`mutation ($inputs: [SubmitTaskInput!]!) { submitTasks(inputs: $inputs) { id } }`, {
      inputs: Array.from({ length: 20 }, (_, i) => ({ type: `after-${i}`, queue: "s", payload: { i } })),
    });
    expect(batch.errors).toBeUndefined();
    const ids = (batch.data?.submitTasks as { id: string }[]).map((t) => t.id);
    // Each client drops its silent connection after REDIS_SOCKET_TIMEOUT_SECONDS of waiting for a reply and
    // connects again; without the timeout they waited for TCP, which never gives up on a peer that acknowledges.
    await waitFor(
      "the tasks submitted after the partition to succeed",
      async () => {
        const { rows } = await tdb.db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM tasks WHERE tenant_id = $1 AND id = ANY($2) AND status = 'SUCCEEDED'", [tenantId, ids]);
        return rows[0]!.n === ids.length;
      },
      30_000,
      100,
    );
    const calls = receiver.requests.filter((r) => ids.includes((r.json as { taskId: string }).taskId));
    expect(calls).toHaveLength(ids.length);
  }, 60_000);

  it("drops a subscriber's silenced connection too, though it sends no command while it listens, and hears messages again", async () => {
    const channel = `${testRedis.prefix}:silenced`;
    const subscriber = createRedis({ url: proxy.rewrite(testRedis.url), socketTimeoutMs: SOCKET_TIMEOUT_SECONDS * 1000 }, "test-subscriber");
    subscriber.on("error", () => undefined);
    const direct = createRedis(testRedis.url, "test-publisher");
    try {
      const heard: string[] = [];
      subscriber.on("message", (_channel: string, message: string) => heard.push(message));
      await subscriber.subscribe(channel);
      await direct.publish(channel, "before");
      await waitFor("the message before the partition", () => heard.includes("before"), 10_000, 20);

      proxy.silence();
      // Published into the silence, lost (pub/sub keeps nothing), until the subscriber has connected and
      // subscribed again (ioredis resubscribes on reconnect).
      let n = 0;
      await waitFor("a message published after the partition to be heard", async () => {
        await direct.publish(channel, `after-${n++}`);
        return heard.some((m) => m.startsWith("after-"));
      }, 20_000, 200);
    } finally {
      subscriber.disconnect();
      direct.disconnect();
    }
  }, 40_000);
});
