/**
 * The gateway SIGKILLed between a submission's commit and its answer. The
 * gateway's Redis connection is silenced (TCP proxy), so after the commit its
 * post-commit dispatch waits (up to 2 s) for a reply that never comes: the
 * test kills it as soon as the task is in Postgres, before anything is sent
 * back. The client retries with the same idempotency key on a new gateway
 * and gets that task; the scheduler's outbox delivers it, and it runs once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor, type AppProcess } from "../helpers/app-process.js";
import { startReceiver, type HttpReceiver } from "../helpers/http-receiver.js";
import { gql } from "../helpers/platform.js";
import { createTenantVia, printAppLogsOnFailure, startGatewayBehindRedisProxy, startGatewayProcess, startServingApp, type GatewayProcess, type ProcessTenant, type RedisProxiedGateway } from "../helpers/ready-apps.js";

let platform: RedisProxiedGateway;
let tenant: ProcessTenant;
let receiver: HttpReceiver;
const apps: AppProcess[] = [];

beforeAll(async () => {
  receiver = await startReceiver();
  platform = await startGatewayBehindRedisProxy("durgwkill", { ALLOW_PRIVATE_TARGETS: "1" });
  tenant = await createTenantVia(platform.gateway.url, platform.adminToken, "gw-kill");
  const res = await gql(platform.gateway.url, `mutation ($i: UpsertQueueInput!) { upsertQueue(input: $i) { name } }`, { i: { name: "push", mode: "PUSH", endpointUrl: `${receiver.url}/run` } }, tenant.apiKey);
  expect(res.errors).toBeUndefined();
  const env = { DATABASE_URL: platform.tdb.url, REDIS_URL: platform.testRedis.url, REDIS_KEY_PREFIX: platform.testRedis.prefix, ALLOW_PRIVATE_TARGETS: "1", LOG_LEVEL: "warn" };
  apps.push((await startServingApp("scheduler", env)).app, (await startServingApp("worker", env)).app);
}, 120_000);

afterAll(async () => {
  await Promise.all(apps.map((a) => a.stop()));
  await receiver?.close();
  await platform?.stop();
});

const SUBMIT = `mutation ($i: SubmitTaskInput!) { submitTask(input: $i) { id } }`;
const input = (key: string) => ({ type: "keyed", queue: "push", idempotencyKey: key });

describe("durability: the gateway killed between commit and answer", () => {
  printAppLogsOnFailure(apps);

  it("a client retrying with its idempotency key gets the one task, which runs once", async () => {
    // Warm: the path works end to end.
    const warm = await gql<{ submitTask: { id: string } }>(platform.gateway.url, SUBMIT, { i: input("warm") }, tenant.apiKey);
    expect(warm.errors).toBeUndefined();
    platform.proxy.silence();
    const first = gql(platform.gateway.url, SUBMIT, { i: input("k1") }, tenant.apiKey).then(
      () => "answered",
      () => "no answer",
    );
    const committed = await waitFor(
      "the task committed",
      async () => (await platform.tdb.db.pool.query<{ id: string }>("SELECT id FROM tasks WHERE idempotency_key = 'k1'")).rows[0]?.id,
      10_000,
      5,
    );
    platform.gateway.app.kill("SIGKILL");
    await platform.gateway.app.exited;
    // Killed before it answered: the client never learnt the id.
    expect(await first).toBe("no answer");

    const replacement: GatewayProcess = await startGatewayProcess(
      { DATABASE_URL: platform.tdb.url, REDIS_URL: platform.testRedis.url, REDIS_KEY_PREFIX: platform.testRedis.prefix, ALLOW_PRIVATE_TARGETS: "1", LOG_LEVEL: "warn" },
      platform.adminToken,
    );
    apps.push(replacement.app);
    const retried = await gql<{ submitTask: { id: string } }>(replacement.url, SUBMIT, { i: input("k1") }, tenant.apiKey);
    expect(retried.errors).toBeUndefined();
    expect(retried.data!.submitTask.id).toBe(committed);

    const { rows } = await platform.tdb.db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM tasks WHERE idempotency_key = 'k1'");
    expect(rows[0]!.n).toBe(1);
    const fromKill = Date.now();
    await waitFor("the task SUCCEEDED", async () => (await platform.tdb.db.pool.query("SELECT 1 FROM tasks WHERE id = $1 AND status = 'SUCCEEDED' AND attempts = 1", [committed])).rowCount === 1, 20_000, 50);
    expect(receiver.requests.filter((r) => (r.json as { taskId: string }).taskId === committed)).toHaveLength(1);
    console.log(`gateway killed between commit and answer: the retry named the committed task; it SUCCEEDED once ${Date.now() - fromKill} ms after the retry's answer`);
  }, 90_000);
});
