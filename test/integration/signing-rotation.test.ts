import { createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApp, waitFor, type AppProcess } from "../helpers/app-process.js";
import { freePort } from "../helpers/free-port.js";
import { startReceiver, type HttpReceiver, type ReceivedRequest } from "../helpers/http-receiver.js";
import { createTestDatabase, uniqueRedisPrefix, type TestDatabase } from "../helpers/test-database.js";

/**
 * rotateSigningSecret against a running gateway and worker: once the
 * mutation has answered, the next PUSH request is signed with the new secret
 * (and the one it replaced). The worker keeps the tenant's secrets in a
 * directory it reloads every second; without the rotation's NOTIFY the
 * request after the answer carried the old signatures only, and a receiver
 * already verifying with the new secret refused it.
 */
const REDIS_URL = "redis://127.0.0.1:6379/0";
const ADMIN_TOKEN = `admin-${"r".repeat(24)}`;
/** Rounds of rotate-then-submit: one that slipped in right after a periodic reload would prove nothing on its own. */
const ROUNDS = 5;

let tdb: TestDatabase;
let endpoint: HttpReceiver;
let apps: AppProcess[] = [];
let gatewayUrl = "";

async function call<T>(query: string, variables: Record<string, unknown>, token: string): Promise<T> {
  const res = await fetch(gatewayUrl, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await res.json()) as { data?: T; errors?: unknown[] };
  if (body.errors) throw new Error(`GraphQL errors: ${JSON.stringify(body.errors)}`);
  return body.data as T;
}

/** Whether `secret` signed `req` (Standard Webhooks v1, computed here rather than with core's signer). */
function signedWith(req: ReceivedRequest, secret: string): boolean {
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  const expected = createHmac("sha256", key).update(`${req.headers["webhook-id"]}.${req.headers["webhook-timestamp"]}.${req.body}`).digest("base64");
  return String(req.headers["webhook-signature"]).split(" ").includes(`v1,${expected}`);
}

beforeAll(async () => {
  tdb = await createTestDatabase("rotation");
  endpoint = await startReceiver();
  const port = await freePort();
  gatewayUrl = `http://127.0.0.1:${port}/graphql`;
  const env = { DATABASE_URL: tdb.url, REDIS_URL, REDIS_KEY_PREFIX: uniqueRedisPrefix("rot"), ADMIN_TOKEN, ALLOW_PRIVATE_TARGETS: "1", LOG_LEVEL: "warn" };
  apps = [startApp("gateway", { ...env, PORT: String(port), HOST: "127.0.0.1" }), startApp("worker", env)];
  await waitFor("gateway health", async () => (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null))?.ok === true, 60_000, 100);
});

afterAll(async () => {
  await Promise.all(apps.map((a) => a.stop()));
  await endpoint?.close();
  await tdb?.drop();
});

describe("rotateSigningSecret", () => {
  it("is listened for by the worker", async () => {
    // The worker's LISTEN session: the rotation reaches it through this, not through the periodic reload.
    await waitFor("the worker to listen for rotations", async () => {
      const { rows } = await tdb.db.pool.query(
        `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'tasklane-worker-secret-rotations' AND query ILIKE 'LISTEN%'`,
      );
      return rows.length > 0;
    }, 30_000, 100);
  });

  it("signs the first PUSH request after the mutation answers with the new secret, and the replaced one", async () => {
    const { createTenant } = await call<{ createTenant: { apiKey: string; signingSecret: string } }>(
      `mutation { createTenant(input: {name: "rotating"}) { apiKey signingSecret } }`, {}, ADMIN_TOKEN);
    const apiKey = createTenant.apiKey;
    await call(`mutation ($url: String!) { upsertQueue(input: {name: "push", mode: PUSH, endpointUrl: $url}) { name } }`, { url: `${endpoint.url}/push` }, apiKey);
    const submit = async () =>
      (await call<{ submitTask: { id: string } }>(`mutation { submitTask(input: {type: "signed", queue: "push"}) { id } }`, {}, apiKey)).submitTask.id;
    const requestOf = (id: string) =>
      waitFor(`the PUSH request of ${id}`, () => endpoint.requests.find((r) => (r.json as { taskId?: string } | null)?.taskId === id) ?? null, 30_000, 20);

    // The worker has loaded the queue and the tenant's first secret.
    let previous = createTenant.signingSecret;
    expect(signedWith(await requestOf(await submit()), previous)).toBe(true);
    for (let round = 1; round <= ROUNDS; round++) {
      const { rotateSigningSecret: current } = await call<{ rotateSigningSecret: string }>(`mutation { rotateSigningSecret }`, {}, apiKey);
      const req = await requestOf(await submit());
      expect(signedWith(req, current), `round ${round}: signed with the new secret`).toBe(true);
      expect(signedWith(req, previous), `round ${round}: still signed with the replaced one`).toBe(true);
      previous = current;
    }
  });
});
