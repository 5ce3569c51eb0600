import { Counter, Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { startOpsServer, type OpsServer } from "./ops-server.js";
import { dependencyProbe } from "./readiness.js";

const servers: OpsServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function start(checks: Parameters<typeof dependencyProbe>[0]) {
  const registry = new Registry();
  new Counter({ name: "tasklane_test_total", help: "a counter", registers: [registry] }).inc(3);
  const server = await startOpsServer({ port: 0, host: "127.0.0.1", registry, ready: dependencyProbe(checks, 200) });
  servers.push(server);
  return { server, url: `http://127.0.0.1:${server.port}` };
}

describe("ops server", () => {
  it("serves Prometheus text, liveness and readiness", async () => {
    const { url } = await start({ postgres: async () => 1, redis: async () => "PONG" });
    const metrics = await fetch(`${url}/metrics`);
    expect(metrics.headers.get("content-type")).toContain("text/plain");
    expect(await metrics.text()).toContain("tasklane_test_total 3");
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect((await fetch(`${url}/livez`)).status).toBe(200);
    const ready = await fetch(`${url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: "ready", postgres: "ok", redis: "ok" });
    expect((await fetch(`${url}/nope`)).status).toBe(404);
    expect((await fetch(`${url}/metrics`, { method: "POST" })).status).toBe(405);
  });

  it("is live but not ready when a dependency fails or hangs, and names it", async () => {
    const { url } = await start({
      postgres: async () => {
        throw new Error("connection refused");
      },
      redis: () => new Promise(() => undefined),
    });
    const started = Date.now();
    const ready = await fetch(`${url}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({ status: "unavailable", postgres: "down", redis: "down" });
    // The hanging check is cut off at its deadline (200 ms here).
    expect(Date.now() - started).toBeLessThan(1_500);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
  });

  it("reports draining once shutdown has begun, while metrics keep answering", async () => {
    const { server, url } = await start({ postgres: async () => 1 });
    server.markDraining();
    const ready = await fetch(`${url}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({ status: "draining" });
    expect((await fetch(`${url}/metrics`)).status).toBe(200);
    expect((await fetch(`${url}/livez`)).status).toBe(200);
  });
});
