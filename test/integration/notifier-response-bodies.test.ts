/**
 * The status decides a delivery, whatever becomes of the body (Standard
 * Webhooks; the PUSH worker since dded0ab): the notifier (a child process on
 * the built dist/bundle/main.js, real Postgres) against receivers on 127.0.0.1 that
 * answer a status at once and then trickle their body or cut it off.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApp, waitFor, type AppProcess } from "../helpers/app-process.js";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";
import { freePort } from "../helpers/free-port.js";
import { addWebhook, deliveriesOf, finishTask, seedNotifierTenant, type DeliveryRow } from "./notifier-harness.js";

let tdb: TestDatabase;
let server: Server;
let base = "";
let notifier: AppProcess;
const hits = new Map<string, number>();

const routes: Record<string, (req: IncomingMessage, res: ServerResponse) => void> = {
  // 200 at once, then one byte a second for 14 s: the QA's slow body (it went "timed out after 10 s", four times).
  "/trickle": (_req, res) => {
    res.writeHead(200, { "content-type": "text/plain" });
    let sent = 0;
    const timer = setInterval(() => {
      res.write(".");
      if (++sent >= 14) {
        clearInterval(timer);
        res.end();
      }
    }, 1000);
    res.on("close", () => clearInterval(timer));
  },
  // 200 promising 100 bytes, 7 sent, then the connection dropped (it went FAILED, "other side closed").
  "/cut": (req, res) => {
    res.writeHead(200, { "content-length": "100" });
    res.write("partial");
    setTimeout(() => req.socket.destroy(), 100);
  },
  "/cut-503": (req, res) => {
    res.writeHead(503, { "content-length": "100" });
    res.write("down fo");
    setTimeout(() => req.socket.destroy(), 100);
  },
};

beforeAll(async () => {
  tdb = await createTestDatabase("notifbody");
  server = createServer((req, res) => {
    const path = req.url ?? "";
    hits.set(path, (hits.get(path) ?? 0) + 1);
    req.resume();
    req.on("end", () => routes[path]?.(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const port = await freePort();
  notifier = startApp("notifier", {
    DATABASE_URL: tdb.url,
    ALLOW_PRIVATE_TARGETS: "1",
    WEBHOOK_RETRY_SCHEDULE: "1,1,1",
    METRICS_PORT: String(port),
    NOTIFIER_OUTBOX_POLL_MS: "600000",
    NOTIFIER_DELIVERY_POLL_MS: "600000",
  });
  await waitFor("notifier /healthz", async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).status === 200, 30_000, 100);
});

afterAll(async () => {
  const code = await notifier?.stop();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await tdb?.drop();
  expect(code, notifier?.output()).toBe(0);
});

async function deliverTo(path: string): Promise<{ taskId: string; webhookId: string; started: number }> {
  const t = await seedNotifierTenant(tdb.db);
  const hook = await addWebhook(tdb.db, t.tenantId, `${base}${path}`, ["*"]);
  const started = Date.now();
  return { taskId: await finishTask(tdb.db, t, "succeed"), webhookId: hook.id, started };
}

const settled = (taskId: string, status: string, timeoutMs: number) =>
  waitFor(`delivery ${status}`, async () => {
    const rows = await deliveriesOf(tdb.db, taskId);
    return rows[0]?.status === status ? (rows[0] as DeliveryRow) : null;
  }, timeoutMs);

const streak = async (webhookId: string) =>
  (await tdb.db.pool.query<{ failure_streak: number }>("SELECT failure_streak FROM webhooks WHERE id = $1", [webhookId])).rows[0]?.failure_streak;

describe("a delivery's outcome is its status", () => {
  it("a 200 whose body trickles for 14 s is DELIVERED once, within a few seconds, not timed out and retried", async () => {
    const { taskId, webhookId, started } = await deliverTo("/trickle");
    const row = await settled(taskId, "DELIVERED", 6_000);
    expect(Date.now() - started).toBeLessThan(6_000);
    expect(row).toMatchObject({ attempts: 1, last_response_code: 200 });
    await new Promise((r) => setTimeout(r, 1_500));
    expect(hits.get("/trickle")).toBe(1);
    expect(await streak(webhookId)).toBe(0);
  });

  it("a 200 whose connection closes mid-body is DELIVERED once with its code", async () => {
    const { taskId, webhookId } = await deliverTo("/cut");
    const row = await settled(taskId, "DELIVERED", 6_000);
    expect(row).toMatchObject({ attempts: 1, last_response_code: 200 });
    await new Promise((r) => setTimeout(r, 1_500));
    expect(hits.get("/cut")).toBe(1);
    expect(await streak(webhookId)).toBe(0);
  });

  it("a 503 whose connection closes mid-body is a failed attempt with its code and what arrived", async () => {
    const { taskId } = await deliverTo("/cut-503");
    const row = await waitFor("a failed attempt recorded", async () => {
      const rows = await deliveriesOf(tdb.db, taskId);
      return (rows[0]?.attempts ?? 0) >= 1 ? rows[0] : null;
    }, 6_000);
    expect(row).toMatchObject({ last_response_code: 503, last_error: "HTTP 503: down fo" });
    expect(row.status).not.toBe("DELIVERED");
  });
});
