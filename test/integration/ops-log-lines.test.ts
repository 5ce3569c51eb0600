/**
 * The platform's logs as an operator reads them: gateway, scheduler, worker
 * and notifier from dist at LOG_LEVEL=debug (what one turns on to diagnose),
 * through a session that handles every kind of secret (operator token, API
 * keys, signing and webhook secrets, a console password, a wrong bearer
 * token) and failing work. Every line is one JSON object; no secret or
 * payload appears anywhere; a line about a failed attempt or delivery names
 * the task, tenant and queue (or webhook) it is about.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor, type AppProcess } from "../helpers/app-process.js";
import { startReceiver, type HttpReceiver } from "../helpers/http-receiver.js";
import { createTestRedis, gql, randomSuffix, type TestRedis } from "../helpers/platform.js";
import { printAppLogsOnFailure, startGatewayProcess, startServingApp, type GatewayProcess } from "../helpers/ready-apps.js";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";

let tdb: TestDatabase;
let testRedis: TestRedis;
let receiver: HttpReceiver;
let gateway: GatewayProcess;
const apps: AppProcess[] = [];
const adminToken = `admin-${randomSuffix(16)}`;
/** Everything secret this session hands to or gets from the platform. */
const secrets: Record<string, string> = { adminToken };
const PAYLOAD_MARKER = `payload-${randomSuffix(8)}`;

async function call<T>(query: string, variables: Record<string, unknown>, token: string): Promise<T> {
  const res = await gql<T>(gateway.url, query, variables, token);
  if (res.errors || !res.data) throw new Error(`${query}: ${JSON.stringify(res.errors)}`);
  return res.data;
}

beforeAll(async () => {
  tdb = await createTestDatabase("opslogs");
  testRedis = createTestRedis();
  receiver = await startReceiver((req, res) => {
    const status = req.path.startsWith("/fails") ? 500 : req.path.startsWith("/refuses") ? 400 : 200;
    res.writeHead(status, { "content-type": "application/json" }).end(status === 200 ? '{"ok":true}' : '{"error":"no"}');
  });
  const env = { DATABASE_URL: tdb.url, REDIS_URL: testRedis.url, REDIS_KEY_PREFIX: testRedis.prefix, ALLOW_PRIVATE_TARGETS: "1", LOG_LEVEL: "debug", WEBHOOK_RETRY_SCHEDULE: "1,1" };
  gateway = await startGatewayProcess(env, adminToken);
  apps.push(gateway.app);
  for (const name of ["scheduler", "worker", "notifier"] as const) apps.push((await startServingApp(name, env)).app);
}, 180_000);

afterAll(async () => {
  await Promise.all(apps.map((a) => a.stop(45_000)));
  await receiver?.close();
  await testRedis?.cleanup();
  await tdb?.drop();
}, 120_000);

describe("log lines of a live platform", () => {
  printAppLogsOnFailure(apps);

  it("are JSON, carry no secret or payload, and name the task, tenant and queue of a failed attempt", async () => {
    const created = await call<{ createTenant: { tenant: { id: string }; apiKey: string; signingSecret: string } }>(
      `mutation { createTenant(input: {name: "logs"}) { tenant { id } apiKey signingSecret } }`,
      {},
      adminToken,
    );
    const tenantId = created.createTenant.tenant.id;
    const key = created.createTenant.apiKey;
    secrets.apiKey = key;
    secrets.signingSecret = created.createTenant.signingSecret;
    const password = `pw-${randomSuffix(12)}`;
    secrets.consolePassword = password;
    await call(`mutation ($p: String!, $t: ID!) { createConsoleUser(email: "ops@example.com", password: $p, tenantId: $t) { id } }`, { p: password, t: tenantId }, adminToken);
    secrets.consoleToken = (await call<{ consoleSignIn: { token: string } }>(`mutation ($p: String!) { consoleSignIn(email: "ops@example.com", password: $p) { token } }`, { p: password }, adminToken)).consoleSignIn.token;
    // A wrong password and a wrong key are logged as refusals, never with what was tried.
    secrets.wrongPassword = `wrong-${randomSuffix(12)}`;
    await gql(gateway.url, `mutation ($p: String!) { consoleSignIn(email: "ops@example.com", password: $p) { token } }`, { p: secrets.wrongPassword });
    secrets.wrongKey = `tl_${randomSuffix(4)}_${randomSuffix(20)}`;
    await gql(gateway.url, `{ queues { name } }`, {}, secrets.wrongKey);
    secrets.secondKey = (await call<{ createApiKey: { secret: string } }>(`mutation { createApiKey(name: "second") { secret } }`, {}, key)).createApiKey.secret;
    secrets.rotatedSigningSecret = (await call<{ rotateSigningSecret: string }>(`mutation { rotateSigningSecret }`, {}, key)).rotateSigningSecret;
    const hook = await call<{ createWebhook: { webhook: { id: string }; secret: string } }>(
      `mutation ($u: String!) { createWebhook(input: {url: $u, events: ["*"]}) { webhook { id } secret } }`,
      { u: `${receiver.url}/fails/hook` },
      key,
    );
    secrets.webhookSecret = hook.createWebhook.secret;
    for (const name of ["fails", "refuses"]) {
      await call(`mutation ($n: String!, $u: String!) { upsertQueue(input: {name: $n, mode: PUSH, endpointUrl: $u}) { name } }`, { n: name, u: `${receiver.url}/${name}` }, key);
    }
    const submit = (queue: string) =>
      call<{ submitTask: { id: string } }>(
        `mutation ($q: String!, $p: JSON!) { submitTask(input: {type: "charge", queue: $q, payload: $p, maxAttempts: 2, backoff: {strategy: FIXED, delaySeconds: 0.2, jitter: false}}) { id } }`,
        { q: queue, p: { card: PAYLOAD_MARKER } },
        secrets.secondKey as string,
      );
    const failing = (await submit("fails")).submitTask.id;
    const refused = (await submit("refuses")).submitTask.id;
    // The API does not show queue ids; an operator reading the logs finds the queue by id in the queues table.
    const { rows: queueRows } = await tdb.db.pool.query<{ id: string; name: string }>("SELECT id, name FROM queues WHERE tenant_id = $1", [tenantId]);
    const queueIdOf = (name: string) => queueRows.find((q) => q.name === name)?.id;

    // Both tasks DEAD, their webhook deliveries exhausted (2 retries, a second apart).
    const status = async (id: string) => (await call<{ task: { status: string } }>(`query ($id: ID!) { task(id: $id) { status } }`, { id }, key)).task.status;
    await waitFor("both tasks dead", async () => (await status(failing)) === "DEAD" && (await status(refused)) === "DEAD", 30_000, 200);
    await waitFor("webhook deliveries given up", () => receiver.requests.filter((r) => r.path.startsWith("/fails/hook")).length >= 6, 30_000, 200);
    await new Promise((r) => setTimeout(r, 500));

    const lines = apps.flatMap((app) =>
      app
        .output()
        .split("\n")
        .filter((l) => l.trim() !== "")
        .map((text) => ({ app: app.name, text })),
    );
    expect(lines.length).toBeGreaterThan(20);
    const notJson = lines.filter((l) => {
      try {
        return typeof JSON.parse(l.text) !== "object";
      } catch {
        return true;
      }
    });
    expect(notJson).toEqual([]);

    const leaks = Object.entries({ ...secrets, payload: PAYLOAD_MARKER }).flatMap(([what, secret]) =>
      lines.filter((l) => l.text.includes(secret)).map((l) => `${l.app} logged the ${what}: ${l.text.slice(0, 300)}`),
    );
    expect(leaks).toEqual([]);
    expect(lines.filter((l) => /bearer /i.test(l.text)).map((l) => l.text.slice(0, 300))).toEqual([]);

    const records = lines.map((l) => ({ app: l.app, ...(JSON.parse(l.text) as Record<string, unknown>) }));
    const attemptsFailed = records.filter((r) => r.app === "worker" && r.msg === "attempt failed");
    expect(attemptsFailed.length).toBeGreaterThanOrEqual(3);
    for (const r of attemptsFailed) {
      const queue = r.taskId === failing ? "fails" : "refuses";
      expect(r, JSON.stringify(r)).toMatchObject({ tenantId, queueId: queueIdOf(queue) });
      expect([failing, refused]).toContain(r.taskId);
    }
    const deliveries = records.filter((r) => r.app === "notifier" && r.msg === "delivery not delivered");
    expect(deliveries.length).toBeGreaterThanOrEqual(2);
    for (const r of deliveries) expect(r, JSON.stringify(r)).toMatchObject({ tenantId, webhookId: hook.createWebhook.webhook.id, deliveryId: expect.any(String) });
  }, 120_000);

  it("an internal error is one error line naming the request, the operation and the calling tenant, without the secret being made", async () => {
    const created = await call<{ createTenant: { tenant: { id: string }; apiKey: string } }>(`mutation { createTenant(input: {name: "broken"}) { tenant { id } apiKey } }`, {}, adminToken);
    // A fault nobody planned for: Postgres refuses this one insert for a reason that is not an outage.
    await tdb.db.pool.query(`
      CREATE FUNCTION ops_log_lines_fault() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'injected fault'; END $$;
      CREATE TRIGGER ops_log_lines_fault BEFORE INSERT ON api_keys FOR EACH ROW WHEN (NEW.name = 'explodes') EXECUTE FUNCTION ops_log_lines_fault();`);
    try {
      const res = await gql(gateway.url, `mutation { createApiKey(name: "explodes") { secret } }`, {}, created.createTenant.apiKey);
      expect(res.errors?.[0]?.extensions?.code).toBe("INTERNAL_SERVER_ERROR");
      const requestId = res.errors?.[0]?.extensions?.requestId as string;
      expect(requestId).toBeTruthy();
      const line = await waitFor("the error line", () =>
        gateway.app
          .output()
          .split("\n")
          .filter((l) => l.includes(requestId) && l.includes("unhandled error"))
          .map((l) => JSON.parse(l) as Record<string, unknown>)[0],
      );
      expect(line).toMatchObject({ level: 50, app: "gateway", requestId, tenantId: created.createTenant.tenant.id, path: ["createApiKey"] });
      expect(JSON.stringify(line.err)).toContain("injected fault");
      expect(JSON.stringify(line)).not.toContain(created.createTenant.apiKey);
    } finally {
      await tdb.db.pool.query("DROP TRIGGER ops_log_lines_fault ON api_keys; DROP FUNCTION ops_log_lines_fault()");
    }
  }, 60_000);
});
