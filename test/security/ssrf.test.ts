/**
 * Outbound abuse (SSRF) with ALLOW_PRIVATE_TARGETS=0.
 *
 * At registration: the gateway process refuses every private, loopback,
 * link-local and reserved target (literal in any spelling, or a host name
 * that resolves there) and every scheme but http(s), wherever a URL is
 * accepted: webhook url, PUSH queue endpointUrl, task callbackUrl.
 *
 * At connect time: targets registered through a second gateway that allows
 * private targets are then refused by the worker and the notifier, which run
 * with ALLOW_PRIVATE_TARGETS=0; the local receiver gets nothing and the
 * attempt or delivery records why. Redirects are never followed, even where
 * private targets are allowed. Tests only ever connect to 127.0.0.1.
 */
import { lookup } from "node:dns/promises";
import { hostname } from "node:os";
import { isPrivateAddress } from "@tasklane/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AppProcess } from "../helpers/app-process.js";
import { waitFor } from "../helpers/app-process.js";
import { startReceiver, type HttpReceiver } from "../helpers/http-receiver.js";
import { codeOf } from "../helpers/platform.js";
import { useAttackPlatform } from "./attack-platform.js";

/** Connect-time tests wait on (and restart) real processes: room for a loaded 2-core machine. */
const CONNECT_TIMEOUT_MS = 150_000;

/** A name that resolves to loopback through the system resolver (/etc/hosts), with no outside DNS involved. */
const LOOPBACK_NAME = hostname();

const PRIVATE_URLS = [
  "http://127.0.0.1/",
  "http://127.1/",
  "http://localhost/",
  "http://LOCALHOST./",
  "http://[::1]/",
  "http://[::ffff:127.0.0.1]/",
  "http://[::ffff:a9fe:a9fe]/",
  "http://2130706433/",
  "http://0177.0.0.1/",
  "http://0x7f000001/",
  "http://0.0.0.0/",
  "http://10.0.0.1/",
  "http://10.255.255.254/",
  "http://172.16.0.1/",
  "http://172.31.255.254/",
  "http://192.168.0.1/",
  "http://192.168.255.254/",
  "http://169.254.169.254/latest/meta-data/",
  "http://100.64.0.1/",
  "http://[fc00::1]/",
  "http://[fd12:3456::1]/",
  "http://[fe80::1]/",
  "http://[febf::1]/",
  // IPv4-compatible and IPv4-translated loopback, local-use NAT64, 6to4 of loopback, site-local, Teredo, documentation.
  "http://[::127.0.0.1]/",
  "http://[::ffff:0:7f00:1]/",
  "http://[64:ff9b:1::7f00:1]/",
  "http://[2002:7f00:1::1]/",
  "http://[fec0::1]/",
  "http://[2001::1]/",
  "http://[2001:db8::1]/",
  "http://192.0.2.1/",
  "http://198.51.100.1/",
  "http://203.0.113.1/",
  `http://${LOOPBACK_NAME}/`,
];

const NON_HTTP_URLS = ["ftp://example.com/x", "file:///etc/passwd", "gopher://127.0.0.1:6379/_FLUSHALL", "dict://127.0.0.1:6379/", "javascript:alert(1)", "data:text/plain,x", "ws://example.com/", "http://user:pass@example.com/"];

const REGISTRATIONS = {
  webhook: `mutation ($u: String!) { createWebhook(input: { url: $u, events: ["*"] }) { webhook { id } } }`,
  "queue endpointUrl": `mutation ($u: String!) { upsertQueue(input: { name: "ssrf", mode: PUSH, endpointUrl: $u }) { name } }`,
  callbackUrl: `mutation ($u: String!) { submitTask(input: { type: "ssrf", callbackUrl: $u }) { id } }`,
  "submitTasks callbackUrl": `mutation ($u: String!) { submitTasks(inputs: [{ type: "ok" }, { type: "ssrf", callbackUrl: $u }]) { id } }`,
} as const;

/**
 * callbackUrl is checked without DNS at submission (submitTask is the hot
 * path); a name that resolves inside is refused at connect time instead (below).
 */
const RESOLVED_AT_CONNECT_ONLY = new Set<string>(["callbackUrl", "submitTasks callbackUrl"]);

describe("security: outbound abuse (SSRF) with ALLOW_PRIVATE_TARGETS=0", () => {
  let receiver: HttpReceiver;
  let inside: HttpReceiver;
  // No scheduler: the gateway dispatches right after commit, and nothing here is due later.
  const platform = useAttackPlatform();
  const key = () => platform.canaries.apiKey;

  beforeAll(async () => {
    inside = await startReceiver();
    receiver = await startReceiver((req, res) => {
      if (req.path.startsWith("/redirect")) res.writeHead(req.path.endsWith("307") ? 307 : 302, { location: `${inside.url}/internal` }).end();
      else res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  afterAll(async () => {
    await receiver?.close();
    await inside?.close();
  });

  it("has a host name that resolves to loopback here, so the name case tests resolution, not a name list", async () => {
    const addresses = await lookup(LOOPBACK_NAME, { all: true });
    expect(addresses.length).toBeGreaterThan(0);
    expect(addresses.every((a) => isPrivateAddress(a.address))).toBe(true);
  });

  it("refuses every private target and non-http(s) scheme at registration, wherever a URL is accepted, and writes nothing", async () => {
    const before = await platform.snapshot();
    const accepted: string[] = [];
    for (const [where, query] of Object.entries(REGISTRATIONS)) {
      for (const url of [...PRIVATE_URLS, ...NON_HTTP_URLS]) {
        if (url === `http://${LOOPBACK_NAME}/` && RESOLVED_AT_CONNECT_ONLY.has(where)) continue;
        const res = await platform.call(query, { u: url }, key());
        if (codeOf(res) !== "BAD_USER_INPUT" || !/refused|invalid|must be/i.test(res.errors?.[0]?.message ?? "")) accepted.push(`${where} ${url}: ${JSON.stringify(res.errors ?? res.data)}`);
      }
    }
    expect(accepted).toEqual([]);
    expect(await platform.snapshot()).toEqual(before);
  });

  describe("at connect time (targets registered through a gateway that allows them)", () => {
    let permissive: string;
    let worker: AppProcess;
    let notifier: AppProcess;
    const port = () => new URL(receiver.url).port;

    beforeAll(async () => {
      const [gateway, startedWorker, startedNotifier] = await Promise.all([platform.startGateway({ ALLOW_PRIVATE_TARGETS: "1" }), platform.start("worker"), platform.start("notifier")]);
      [permissive, worker, notifier] = [gateway.url, startedWorker, startedNotifier];
    });

    it("the worker refuses PUSH endpoints inside: the task dies with the reason, the receiver sees nothing", async () => {
      const endpoints = [`http://127.0.0.1:${port()}/a`, `http://localhost:${port()}/b`, `http://${LOOPBACK_NAME}:${port()}/c`, `http://[::ffff:127.0.0.1]:${port()}/d`, `http://2130706433:${port()}/e`];
      const taskIds: string[] = [];
      for (const [i, endpointUrl] of endpoints.entries()) {
        const queue = await platform.call(`mutation ($i: UpsertQueueInput!) { upsertQueue(input: $i) { name } }`, { i: { name: `push-${i}`, mode: "PUSH", endpointUrl } }, key(), permissive);
        expect(queue.errors).toBeUndefined();
        const task = await platform.call<{ submitTask: { id: string } }>(`mutation ($q: String!) { submitTask(input: { type: "ssrf", queue: $q, maxAttempts: 1 }) { id } }`, { q: `push-${i}` }, key(), permissive);
        taskIds.push(task.data?.submitTask.id ?? "missing");
      }
      const finished = await waitFor("every PUSH task DEAD", async () => {
        const rows = await platform.database.db.pool.query<{ id: string; status: string; last_error: string | null }>(`SELECT id, status, last_error FROM tasks WHERE id = ANY($1::text[])`, [taskIds]);
        return rows.rows.length === taskIds.length && rows.rows.every((r) => r.status === "DEAD") ? rows.rows : null;
      }, 90_000, 200);
      for (const row of finished) expect({ id: row.id, error: row.last_error }).toEqual({ id: row.id, error: expect.stringMatching(/private|refused/i) });
      expect(receiver.requests).toEqual([]);
    }, CONNECT_TIMEOUT_MS);

    it("the notifier refuses webhooks and callbacks inside: deliveries fail with the reason, the receiver sees nothing", async () => {
      const hookUrls = [`http://127.0.0.1:${port()}/hook`, `http://${LOOPBACK_NAME}:${port()}/hook-by-name`];
      for (const url of hookUrls) {
        const hook = await platform.call(`mutation ($u: String!) { createWebhook(input: { url: $u, events: ["task.succeeded"] }) { webhook { id } } }`, { u: url }, key(), permissive);
        expect(hook.errors).toBeUndefined();
      }
      const callbackUrl = `http://${LOOPBACK_NAME}:${port()}/callback`;
      const submitted = await platform.call<{ submitTask: { id: string } }>(`mutation ($u: String) { submitTask(input: { type: "cb", queue: "default", callbackUrl: $u }) { id } }`, { u: callbackUrl }, key(), permissive);
      const taskId = submitted.data?.submitTask.id;
      const leased = await waitFor("the lease", async () => {
        const res = await platform.call<{ leaseTasks: Array<{ leaseToken: string; task: { id: string } }> }>(`mutation { leaseTasks(queue: "default", workerId: "ssrf", max: 10) { leaseToken task { id } } }`, {}, key());
        return res.data?.leaseTasks.find((l) => l.task.id === taskId);
      }, 15_000, 100);
      expect(codeOf(await platform.call(`mutation ($id: ID!, $t: String!) { completeTask(taskId: $id, leaseToken: $t) { id } }`, { id: taskId, t: leased.leaseToken }, key()))).toBeUndefined();

      const urls = [...hookUrls, callbackUrl];
      const failed = await waitFor("every delivery refused", async () => {
        const rows = await platform.database.db.pool.query<{ url: string; status: string; last_error: string | null }>(
          `SELECT url, status, last_error FROM webhook_deliveries WHERE task_id = $1 AND url = ANY($2::text[])`,
          [taskId, urls],
        );
        return rows.rows.length === urls.length && rows.rows.every((r) => r.last_error !== null) ? rows.rows : null;
      }, 60_000, 200);
      for (const row of failed) expect(row).toEqual({ url: row.url, status: expect.not.stringMatching(/DELIVERED/), last_error: expect.stringMatching(/refused/i) });
      expect(receiver.requests).toEqual([]);
    }, CONNECT_TIMEOUT_MS);

    it("never follows a redirect, even with private targets allowed: the inside address is never contacted", async () => {
      await Promise.all([worker.stop(), notifier.stop()]);
      await Promise.all([platform.start("worker", { ALLOW_PRIVATE_TARGETS: "1" }), platform.start("notifier", { ALLOW_PRIVATE_TARGETS: "1" })]);
      const queue = await platform.call(`mutation ($u: String!) { upsertQueue(input: { name: "redirecting", mode: PUSH, endpointUrl: $u }) { name } }`, { u: `${receiver.url}/redirect-302` }, key(), permissive);
      expect(queue.errors).toBeUndefined();
      const hook = await platform.call(`mutation ($u: String!) { createWebhook(input: { url: $u, events: ["task.dead"] }) { webhook { id } } }`, { u: `${receiver.url}/redirect-307` }, key(), permissive);
      expect(hook.errors).toBeUndefined();
      const task = await platform.call<{ submitTask: { id: string } }>(`mutation { submitTask(input: { type: "redirect", queue: "redirecting", maxAttempts: 1 }) { id } }`, {}, key());
      const taskId = task.data?.submitTask.id;
      await waitFor("the redirect answered and the task DEAD", async () => {
        const row = await platform.database.db.pool.query<{ status: string }>(`SELECT status FROM tasks WHERE id = $1`, [taskId]);
        return row.rows[0]?.status === "DEAD";
      }, 90_000, 200);
      await waitFor("the webhook delivery attempted", async () => {
        const rows = await platform.database.db.pool.query<{ attempts: number }>(`SELECT attempts FROM webhook_deliveries WHERE task_id = $1 AND url LIKE '%redirect-307'`, [taskId]);
        return (rows.rows[0]?.attempts ?? 0) > 0;
      }, 60_000, 200);
      expect(receiver.requests.map((r) => r.path)).toEqual(expect.arrayContaining(["/redirect-302", "/redirect-307"]));
      expect(inside.requests).toEqual([]);
      const delivery = await platform.database.db.pool.query<{ status: string }>(`SELECT status FROM webhook_deliveries WHERE task_id = $1 AND url LIKE '%redirect-307'`, [taskId]);
      expect(delivery.rows[0]?.status).not.toBe("DELIVERED");
    }, CONNECT_TIMEOUT_MS);
  });

  it("leaks none of the planted secrets into logs, metrics or error messages", async () => {
    expect(await platform.leaks()).toEqual([]);
  });
});
