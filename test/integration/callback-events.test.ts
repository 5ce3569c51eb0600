/**
 * What a task's callbackUrl and the tenant's webhooks hear when a dead task
 * is discarded (discardTask, DEAD -> CANCELLED): task.cancelled, after the
 * task.dead of its death, like any other cancel; and a callbackUrl or webhook
 * url spelled with a space at either end is refused, not stored as typed.
 * The real notifier process delivers to a local receiver.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor, type AppProcess } from "../helpers/app-process.js";
import { startTestNotifier } from "../helpers/test-notifier.js";
import { startReceiver, type HttpReceiver, type ReceivedRequest } from "../helpers/http-receiver.js";
import {
  codeOf,
  createTenant,
  createTestDatabase,
  createTestRedis,
  gql,
  startGateway,
  type CreatedTenant,
  type StartedGateway,
  type TestDatabase,
  type TestRedis,
} from "../helpers/platform.js";

interface Envelope {
  type: string;
  data: { task: { id: string; status: string } };
}

let tdb: TestDatabase;
let redis: TestRedis;
let receiver: HttpReceiver;
let gateway: StartedGateway;
let notifier: AppProcess;
let tenant: CreatedTenant;

const api = <T>(query: string, variables: Record<string, unknown> = {}) => gql<T>(gateway.url, query, variables, tenant.apiKey);

/** The events `path` received about task `id`, in order: "type/status". */
function heard(path: string, id: string): string[] {
  return receiver.requests
    .filter((r: ReceivedRequest) => r.path === path)
    .map((r) => r.json as Envelope)
    .filter((e) => e.data.task.id === id)
    .map((e) => `${e.type}/${e.data.task.status}`);
}

beforeAll(async () => {
  tdb = await createTestDatabase("cbevents");
  redis = createTestRedis();
  receiver = await startReceiver();
  gateway = await startGateway({ databaseUrl: tdb.url, redis, env: { ALLOW_PRIVATE_TARGETS: "1" } });
  notifier = startTestNotifier(tdb, redis, { WEBHOOK_RETRY_SCHEDULE: "0.2,0.2" });
  tenant = await createTenant(gateway);
});

afterAll(async () => {
  await notifier?.stop();
  await gateway?.close();
  await receiver?.close();
  await redis?.cleanup();
  await tdb?.drop();
});

describe("discardTask notifies", () => {
  it("sends task.cancelled to the webhooks and the callbackUrl of a discarded dead task, after its task.dead", async () => {
    const hook = await api<{ createWebhook: { webhook: { id: string } } }>(
      `mutation ($u: String!) { createWebhook(input: { url: $u, events: ["task.dead", "task.cancelled"] }) { webhook { id } } }`,
      { u: `${receiver.url}/hook` },
    );
    expect(hook.errors).toBeUndefined();
    const submitted = await api<{ submitTask: { id: string } }>(`mutation ($c: String!) { submitTask(input: { type: "doomed", maxAttempts: 1, callbackUrl: $c }) { id } }`, {
      c: `${receiver.url}/cb`,
    });
    const id = submitted.data!.submitTask.id;
    const leased = await api<{ leaseTasks: { leaseToken: string }[] }>(`mutation { leaseTasks(queue: "default", workerId: "w") { leaseToken } }`);
    const failed = await api<{ failTask: { status: string } }>(`mutation ($t: ID!, $l: String!) { failTask(taskId: $t, leaseToken: $l, error: "boom", retryable: false) { status } }`, {
      t: id,
      l: leased.data!.leaseTasks[0]!.leaseToken,
    });
    expect(failed.data?.failTask.status).toBe("DEAD");
    await waitFor("task.dead at both", () => heard("/hook", id).length === 1 && heard("/cb", id).length === 1, 20_000);

    const discarded = await api<{ discardTask: { status: string } }>(`mutation ($id: ID!) { discardTask(id: $id) { status } }`, { id });
    expect(discarded.data?.discardTask.status).toBe("CANCELLED");
    await waitFor("task.cancelled at both", () => heard("/hook", id).length === 2 && heard("/cb", id).length === 2, 20_000);
    expect(heard("/hook", id)).toEqual(["task.dead/DEAD", "task.cancelled/CANCELLED"]);
    expect(heard("/cb", id)).toEqual(["task.dead/DEAD", "task.cancelled/CANCELLED"]);

    const deliveries = await api<{ webhookDeliveries: { event: string; webhookId: string | null; status: string }[] }>(
      `query { webhookDeliveries(first: 10) { event webhookId status } }`,
    );
    expect(deliveries.data?.webhookDeliveries.filter((d) => d.event === "task.cancelled").map((d) => d.webhookId).sort()).toEqual(
      [hook.data!.createWebhook.webhook.id, null].sort(),
    );
  });

  it("writes no event for a discard that is refused", async () => {
    const submitted = await api<{ submitTask: { id: string } }>(`mutation ($c: String!) { submitTask(input: { type: "alive", callbackUrl: $c }) { id } }`, { c: `${receiver.url}/cb` });
    const id = submitted.data!.submitTask.id;
    expect(codeOf(await api(`mutation ($id: ID!) { discardTask(id: $id) { status } }`, { id }))).toBe("CONFLICT");
    const rows = await tdb.db.pool.query("SELECT 1 FROM outbox WHERE task_id = $1 AND kind = 'NOTIFY'", [id]);
    expect(rows.rowCount).toBe(0);
  });
});

describe("URLs spelled with spaces", () => {
  it.each([" http://127.0.0.1/x", "http://127.0.0.1/x ", "http://127.0.0.1/\tx"])("refuses %j as a callbackUrl and as a webhook url, writing nothing", async (url) => {
    const before = (await tdb.db.pool.query<{ n: number }>("SELECT (SELECT count(*) FROM tasks)::int + (SELECT count(*) FROM webhooks)::int AS n")).rows[0]!.n;
    const task = await api(`mutation ($c: String!) { submitTask(input: { type: "spaced", callbackUrl: $c }) { id } }`, { c: url });
    expect(codeOf(task)).toBe("BAD_USER_INPUT");
    expect(JSON.stringify(task.errors)).toContain("callbackUrl");
    const batch = await api(`mutation ($c: String!) { submitTasks(inputs: [{ type: "ok" }, { type: "spaced", callbackUrl: $c }]) { id } }`, { c: url });
    expect(codeOf(batch)).toBe("BAD_USER_INPUT");
    const hook = await api(`mutation ($u: String!) { createWebhook(input: { url: $u, events: ["*"] }) { webhook { id } } }`, { u: url });
    expect(codeOf(hook)).toBe("BAD_USER_INPUT");
    const after = (await tdb.db.pool.query<{ n: number }>("SELECT (SELECT count(*) FROM tasks)::int + (SELECT count(*) FROM webhooks)::int AS n")).rows[0]!.n;
    expect(after).toBe(before);
  });
});
