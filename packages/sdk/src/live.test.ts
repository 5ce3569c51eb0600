import { afterEach, describe, expect, it, vi } from "vitest";
import WebSocket from "ws";
import { TasklaneClient } from "./client.js";
import { TasklaneError } from "./errors.js";
import { LiveResource, webSocketUrlOf, type LiveOptions } from "./live.js";
import { startScriptedSocket, type ScriptedSocket } from "./test-support/scripted-socket.js";

describe("the live updates' socket URL", () => {
  it("is the GraphQL URL with http turned into ws and https into wss, path and query kept", () => {
    expect(webSocketUrlOf("http://127.0.0.1:4000/graphql")).toBe("ws://127.0.0.1:4000/graphql");
    expect(webSocketUrlOf("HTTPS://api.example.com/graphql?x=1")).toBe("wss://api.example.com/graphql?x=1");
  });

  it("follows the client's url unless webSocketUrl is given", () => {
    expect(new TasklaneClient({ url: "https://gw.example.com/graphql", apiKey: "k" }).live.url).toBe("wss://gw.example.com/graphql");
    expect(new TasklaneClient({ url: "https://gw.example.com/graphql", apiKey: "k", webSocketUrl: "wss://live.example.com/ws" }).live.url).toBe("wss://live.example.com/ws");
  });
});

describe("a live iterator against a scripted graphql-ws endpoint", () => {
  let endpoint: ScriptedSocket | null = null;
  afterEach(async () => {
    await endpoint?.close();
    endpoint = null;
  });
  const liveAt = (url: string, options: LiveOptions = {}) => new LiveResource("http://unused/graphql", "k", { webSocketUrl: url, ...options });

  it("ends with OVERLOADED (LIVE_BUFFER_FULL) and closes its socket when more than liveBufferSize events wait for the loop", async () => {
    endpoint = await startScriptedSocket();
    const updates = liveAt(endpoint.url, { liveBufferSize: 3 }).taskUpdates({ taskId: "t1" });
    const first = updates.next();
    await endpoint.subscribed();
    endpoint.push("taskUpdated", { taskId: "t1", n: 0 });
    expect((await first).value).toEqual({ taskId: "t1", n: 0 });
    // The loop is away: three fit, the fourth does not.
    for (let i = 1; i <= 4; i++) endpoint.push("taskUpdated", { taskId: "t1", n: i });
    await vi.waitFor(() => expect(endpoint?.openSockets()).toBe(0), { timeout: 5000 });
    const error: unknown = await updates.next().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TasklaneError);
    expect(error).toMatchObject({ code: "OVERLOADED", extensions: { reason: "LIVE_BUFFER_FULL" } });
  });

  it("subscribes again after a lost socket from the last event it received (after), so the gateway sends what it missed", async () => {
    endpoint = await startScriptedSocket();
    const server = endpoint;
    const updates = liveAt(server.url).taskUpdates({ queue: "q", after: "5" });
    const first = updates.next();
    await server.subscribed();
    expect(server.subscribeVariables).toEqual([{ taskId: null, queue: "q", after: "5" }]);
    server.push("taskUpdated", { id: "7", taskId: "t1" });
    server.push("taskUpdated", { id: "9", taskId: "t2" });
    expect((await first).value).toEqual({ id: "7", taskId: "t1" });
    await server.received();
    // The loop has taken 7 and not yet 9: the resume is after what was received, not what was taken.
    server.dropSockets();
    await vi.waitFor(() => expect(server.subscribeVariables.length).toBe(2), { timeout: 15_000 });
    expect(server.subscribeVariables[1]).toEqual({ taskId: null, queue: "q", after: "9" });
    expect((await updates.next()).value).toEqual({ id: "9", taskId: "t2" });
    const next = updates.next();
    server.push("taskUpdated", { id: "12", taskId: "t1" });
    expect((await next).value).toEqual({ id: "12", taskId: "t1" });
    await updates.return();
  }, 20_000);

  it("hands a workflow loop that fell behind only the newest snapshot, never LIVE_BUFFER_FULL, the socket kept", async () => {
    endpoint = await startScriptedSocket();
    const updates = liveAt(endpoint.url, { liveBufferSize: 3 }).workflowUpdates("w1");
    const first = updates.next();
    await endpoint.subscribed();
    endpoint.push("workflowUpdated", { id: "w1", n: 0 });
    expect((await first).value).toEqual({ id: "w1", n: 0 });
    // The loop is away while ten snapshots arrive, over three times the buffer.
    for (let i = 1; i <= 10; i++) endpoint.push("workflowUpdated", { id: "w1", n: i });
    await endpoint.received();
    expect((await updates.next()).value).toEqual({ id: "w1", n: 10 });
    // Then on as they come.
    const next = updates.next();
    endpoint.push("workflowUpdated", { id: "w1", n: 11 });
    expect((await next).value).toEqual({ id: "w1", n: 11 });
    expect(endpoint.openSockets()).toBe(1);
    await updates.return();
  });

  it("closes its socket when the signal aborts while the loop is away (not waiting in next())", async () => {
    endpoint = await startScriptedSocket();
    const controller = new AbortController();
    const updates = liveAt(endpoint.url).workflowUpdates("w1", { signal: controller.signal });
    const first = updates.next();
    await endpoint.subscribed();
    endpoint.push("workflowUpdated", { id: "w1" });
    await first;
    expect(endpoint.openSockets()).toBe(1);
    controller.abort();
    await vi.waitFor(() => expect(endpoint?.openSockets()).toBe(0), { timeout: 5000 });
    await expect(updates.next()).rejects.toMatchObject({ code: "ABORTED" });
  });

  it("opens no socket for a signal already aborted", async () => {
    endpoint = await startScriptedSocket();
    let connections = 0;
    const counting = class extends WebSocket {
      constructor(...args: ConstructorParameters<typeof WebSocket>) {
        super(...args);
        connections++;
      }
    };
    const updates = liveAt(endpoint.url, { webSocketImpl: counting }).workflowUpdates("w1", { signal: AbortSignal.abort() });
    await expect(updates.next()).rejects.toMatchObject({ code: "ABORTED" });
    expect(connections).toBe(0);
  });

  it("answers a refused key (4401) with UNAUTHENTICATED at once, without the reconnect attempts", async () => {
    endpoint = await startScriptedSocket({ refuseKey: true });
    const started = Date.now();
    const error: unknown = await liveAt(endpoint.url, { liveRetryAttempts: 5 }).workflowUpdates("w1").next().catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "UNAUTHENTICATED" });
    // A retried close would wait at least 1 s before the first attempt again.
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it("answers a gateway that is down (refused) with NETWORK_ERROR after the reconnect attempts, naming the URL and the cause", async () => {
    endpoint = await startScriptedSocket();
    const url = endpoint.url;
    await endpoint.close();
    endpoint = null;
    const error: unknown = await liveAt(url, { liveRetryAttempts: 1 }).workflowUpdates("w1").next().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TasklaneError);
    expect((error as TasklaneError).code).toBe("NETWORK_ERROR");
    expect((error as TasklaneError).message).toBe(`workflowUpdated: ${url}: connect ECONNREFUSED ${new URL(url).host}, given up after 1 reconnect attempt`);
  }, 10_000);
});
