/**
 * SIGTERM while an app is still starting: each app (as production runs it,
 * a child process on dist/bundle/main.js) says at once that it is stopping, finishes
 * its start-up, closes what it opened and exits 0. It used to meet Node's
 * default handler, exit 143 and log nothing, for a signal in its first
 * second or two. The start-up is held at a known point: Postgres sits behind
 * a proxy that accepts the app's connection and forwards nothing until the
 * test lets it through, so the signal lands while the app connects to run
 * its migrations. A signal earlier still, while the entry loads the app's
 * modules, is held by the entry (holdStopSignals) and handed over in the
 * same way: packages/config/src/stop-signals.test.ts.
 */
import { connect, createServer, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startApp, waitFor, type AppName, type AppProcess } from "../helpers/app-process.js";
import { freePort } from "../helpers/free-port.js";
import { createTestRedis, type TestRedis } from "../helpers/platform.js";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";

/** A proxy to Postgres that holds every connection until `release()`, then forwards them all. */
interface HoldingProxy {
  url(databaseUrl: string): string;
  /** Connections accepted so far. */
  readonly accepted: number;
  release(): void;
  close(): Promise<void>;
}

async function startHoldingProxy(target: URL): Promise<HoldingProxy> {
  const sockets = new Set<Socket>();
  const held: Socket[] = [];
  let released = false;
  let accepted = 0;
  const forward = (client: Socket) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    sockets.add(upstream);
    upstream.on("close", () => sockets.delete(upstream));
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
    client.pipe(upstream).pipe(client);
  };
  const server: Server = createServer((client) => {
    accepted++;
    sockets.add(client);
    client.on("close", () => sockets.delete(client));
    // Paused, a held client's startup message waits in its buffer for the upstream.
    if (released) forward(client);
    else {
      client.pause();
      held.push(client);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url(databaseUrl) {
      const u = new URL(databaseUrl);
      u.hostname = "127.0.0.1";
      u.port = String(port);
      return u.toString();
    },
    get accepted() {
      return accepted;
    },
    release() {
      released = true;
      for (const client of held.splice(0)) forward(client);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}

let tdb: TestDatabase;
let testRedis: TestRedis;
const running: AppProcess[] = [];
const proxies: HoldingProxy[] = [];

beforeAll(async () => {
  tdb = await createTestDatabase("startsig");
  testRedis = createTestRedis();
});

afterEach(async () => {
  await Promise.all(running.splice(0).map((a) => a.stop(5_000)));
  await Promise.all(proxies.splice(0).map((p) => p.close()));
});

afterAll(async () => {
  await testRedis?.cleanup();
  await tdb?.drop();
});

const STOPPING = '"msg":"stopping: signal received while starting; stopping once start-up is done"';
/** The line each app's ordinary shutdown logs: it ran, and closed what the start-up opened. */
const SHUTDOWN_LINE: Record<AppName, string> = {
  gateway: '"msg":"shutting down"',
  scheduler: '"msg":"scheduler draining"',
  worker: '"msg":"worker stopped"',
  notifier: '"msg":"notifier stopped"',
};

describe("SIGTERM during start-up", () => {
  it.each<AppName>(["gateway", "scheduler", "worker", "notifier"])("%s: logs that it is stopping, finishes starting, closes what it opened and exits 0", async (name) => {
    const proxy = await startHoldingProxy(new URL(tdb.url));
    proxies.push(proxy);
    const app = startApp(name, {
      DATABASE_URL: proxy.url(tdb.url),
      REDIS_URL: testRedis.url,
      REDIS_KEY_PREFIX: testRedis.prefix,
      PORT: String(await freePort()),
      ADMIN_TOKEN: "startup-signal-test-admin-token",
      LOG_LEVEL: "info",
    });
    running.push(app);
    // The app is in its start-up: its migration connection waits at the proxy.
    await waitFor(`${name} to connect to Postgres`, () => proxy.accepted > 0, 30_000, 20);
    app.kill("SIGTERM");
    // Said at once, while the start-up is still held.
    await waitFor(`${name} to log that it is stopping`, () => app.output().includes(STOPPING), 10_000, 20);
    expect(app.child.exitCode).toBeNull();
    proxy.release();
    const code = await Promise.race([app.exited, new Promise<"still running">((r) => setTimeout(() => r("still running"), 30_000))]);
    expect({ code, signal: app.child.signalCode }).toEqual({ code: 0, signal: null });
    const lines = app.output().split("\n").filter(Boolean);
    // JSON log lines only (no stack from a half-open connection), and the stop said once.
    for (const line of lines) expect(JSON.parse(line), line).toMatchObject({ msg: expect.any(String) });
    expect(lines.filter((l) => l.includes(STOPPING))).toHaveLength(1);
    expect(lines.findIndex((l) => l.includes(SHUTDOWN_LINE[name]))).toBeGreaterThan(lines.findIndex((l) => l.includes(STOPPING)));
  }, 60_000);
});
