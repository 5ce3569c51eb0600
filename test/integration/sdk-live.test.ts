/**
 * The SDK's live updates (client.live, tasks.waitUntilFinished) against a
 * real gateway in-process and the notifier process (the event relay that
 * feeds subscriptions). PULL tasks are leased and completed through the SDK,
 * so no scheduler or worker runs.
 *
 * Whether the SDK closed its socket is seen on the gateway's side: every
 * WebSocket upgrade the gateway's HTTP server accepts is counted until its
 * TCP socket closes.
 */
import type { Duplex } from "node:stream";
import { IdPrefix, newId } from "@tasklane/core";
import { TasklaneClient, type FetchLike, type TaskEvent, type TasklaneClientOptions } from "@tasklane/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor, type AppProcess } from "../helpers/app-process.js";
import { useGateway } from "../helpers/gateway-fixture.js";
import { createTenant, type CreatedTenant } from "../helpers/platform.js";
import { sdkRejection } from "../helpers/sdk-calls.js";
import { startTcpProxy } from "../helpers/tcp-proxy.js";
import { startTestNotifier } from "../helpers/test-notifier.js";

/**
 * A fetch that calls `answered` each time a task read (the `Task` query) has been answered: counted
 * on the answer, not the request, so "the wait has read the task" means its answer is in.
 */
function countingTaskReads(answered: () => void): FetchLike {
  return async (input, init) => {
    const res = await fetch(input, init);
    if (!/query Task\(/.test(String(init.body))) return res;
    const body = await res.text();
    answered();
    return new Response(body, { status: res.status, headers: res.headers });
  };
}

/** Long enough that a test never sees a safety read: what ends a wait is the event or the first read. */
const NO_RESYNC = 600_000;

describe("SDK live updates", () => {
  const platform = useGateway();
  const openSockets = new Set<Duplex>();
  let notifier: AppProcess;
  let a: CreatedTenant;
  let b: CreatedTenant;
  let client: TasklaneClient;
  let other: TasklaneClient;
  /** Task reads (the `Task` query) of client's answered. */
  let taskReads = 0;

  beforeAll(async () => {
    platform.gateway.httpServer.on("upgrade", (_req, socket: Duplex) => {
      openSockets.add(socket);
      socket.once("close", () => openSockets.delete(socket));
    });
    notifier = startTestNotifier(platform.database, platform.redis);
    a = await createTenant(platform.gateway);
    b = await createTenant(platform.gateway);
    client = new TasklaneClient({ url: platform.gateway.url, apiKey: a.apiKey, fetch: countingTaskReads(() => (taskReads += 1)) });
    other = new TasklaneClient({ url: platform.gateway.url, apiKey: b.apiKey });
    await client.queues.upsert({ name: "live", mode: "PULL" });
    // A queue per test that leases, so a task one test left does not meet another's lease.
    for (const name of ["waits-event", "waits-early", "waits-reconnect", "waits"]) await client.queues.upsert({ name, mode: "PULL" });
  }, 60_000);

  afterAll(async () => {
    await notifier?.stop();
  });

  /** A TCP proxy in front of the gateway, to take the network away, and a client of tenant a's through it. */
  async function throughProxy(options: Omit<TasklaneClientOptions, "url" | "apiKey"> = {}) {
    const proxy = await startTcpProxy("127.0.0.1", Number(new URL(platform.gateway.url).port));
    return { proxy, proxied: new TasklaneClient({ url: proxy.rewrite(platform.gateway.url), apiKey: a.apiKey, ...options }) };
  }

  /**
   * `live.taskUpdates` of `queue` through `reader`, its events gathered until one of a task of type
   * `lastType` (`reading` then resolves), each onConnected's `reconnected` in `connected`.
   */
  function readQueue(reader: TasklaneClient, queue: string, lastType: string) {
    const connected: boolean[] = [];
    const events: TaskEvent[] = [];
    const updates = reader.live.taskUpdates({ queue }, { signal: AbortSignal.timeout(50_000), onConnected: (reconnected) => connected.push(reconnected) });
    const reading = (async () => {
      for await (const event of updates) {
        events.push(event);
        if (event.task.type === lastType) break;
      }
    })();
    return { connected, events, reading };
  }

  const socketsClosed = () => waitFor("the gateway to see every SDK socket closed", () => openSockets.size === 0, 10_000);

  /** Leases the queue's one task and completes it. */
  async function leaseAndComplete(queue: string, taskId: string): Promise<void> {
    const [lease] = await client.leases.lease({ queue, workerId: "live-test" });
    expect(lease?.task.id).toBe(taskId);
    await client.leases.complete(taskId, lease!.leaseToken, { ok: true });
  }

  it("streams a task's status changes in order through the iterator; break closes the socket", async () => {
    const events: TaskEvent[] = [];
    const stop = AbortSignal.timeout(30_000);
    const updates = client.live.taskUpdates({ queue: "live" }, { signal: stop });
    // Probes until one is heard: from then on the subscription listens (the gateway acknowledges no subscribe).
    const heard = (async () => {
      for await (const event of updates) {
        events.push(event);
        if (event.task.type === "watched" && event.status === "SUCCEEDED") break;
      }
    })();
    await waitFor(
      "the subscription to hear a probe",
      async () => {
        if (events.some((e) => e.task.type === "probe")) return true;
        await client.tasks.submit({ type: "probe", queue: "live", delaySeconds: 3600 });
        return false;
      },
      20_000,
      250,
    );
    expect(openSockets.size).toBe(1);
    const task = await client.tasks.submit({ type: "watched", queue: "live" });
    await leaseAndComplete("live", task.id);
    await heard;
    const watched = events.filter((e) => e.taskId === task.id);
    expect(watched.map((e) => [e.previousStatus, e.status])).toEqual([
      [null, "QUEUED"],
      ["QUEUED", "RUNNING"],
      ["RUNNING", "SUCCEEDED"],
    ]);
    expect(watched.every((e) => e.task.id === task.id && typeof e.at === "string")).toBe(true);
    expect(watched.at(-1)?.task).toMatchObject({ status: "SUCCEEDED", result: { ok: true } });
    // A list says where a feed following it starts (an event id), for live.taskUpdates({ after }).
    expect((await client.tasks.list({ queue: "live" }, { first: 1 })).eventCursor).toMatch(/^\d+$/);
    await socketsClosed();
  }, 60_000);

  it("another tenant's taskId is NOT_FOUND from the iterator, and its socket closes", async () => {
    const theirs = await other.tasks.submit({ type: "theirs", delaySeconds: 3600 });
    const error = await sdkRejection(client.live.taskUpdates({ taskId: theirs.id }).next());
    expect(error).toMatchObject({ code: "NOT_FOUND", operation: "taskUpdated" });
    const wf = await sdkRejection(client.live.workflowUpdates(newId(IdPrefix.workflow)).next());
    expect(wf.code).toBe("NOT_FOUND");
    await socketsClosed();
    const waited = await sdkRejection(client.tasks.waitUntilFinished(theirs.id, { timeoutMs: 20_000 }));
    expect(waited.code).toBe("NOT_FOUND");
    await socketsClosed();
  });

  it("waitUntilFinished answers a task completed through a PULL lease after it began, from the event", async () => {
    const task = await client.tasks.submit({ type: "waited", queue: "waits-event" });
    const readsBefore = taskReads;
    const finished = client.tasks.waitUntilFinished(task.id, { timeoutMs: 30_000, resyncMs: NO_RESYNC });
    // Its one read (after the socket was accepted) saw the task QUEUED: only an event can end the wait now.
    await waitFor("the wait's first read", () => taskReads > readsBefore, 10_000);
    expect(openSockets.size).toBe(1);
    await leaseAndComplete("waits-event", task.id);
    const done = await finished;
    expect(done).toMatchObject({ id: task.id, status: "SUCCEEDED", result: { ok: true } });
    expect(taskReads - readsBefore).toBe(1);
    await socketsClosed();
  }, 60_000);

  it("waitUntilFinished answers a task that had finished before the call, from its read", async () => {
    const task = await client.tasks.submit({ type: "early", queue: "waits-early" });
    await leaseAndComplete("waits-early", task.id);
    const started = Date.now();
    const done = await client.tasks.waitUntilFinished(task.id, { timeoutMs: 20_000, resyncMs: NO_RESYNC });
    expect(done).toMatchObject({ id: task.id, status: "SUCCEEDED" });
    expect(Date.now() - started).toBeLessThan(10_000);
    await socketsClosed();
  }, 60_000);

  it("waitUntilFinished reads the task again after its socket is made again: a terminal event sent while it was lost is not missed", async () => {
    let reads = 0;
    const { proxy, proxied } = await throughProxy({ fetch: countingTaskReads(() => (reads += 1)) });
    try {
      const task = await client.tasks.submit({ type: "reconnected", queue: "waits-reconnect" });
      const finished = proxied.tasks.waitUntilFinished(task.id, { timeoutMs: 30_000, resyncMs: NO_RESYNC });
      await waitFor("the wait's first read", () => reads === 1, 10_000);
      // The socket is lost; the task ends meanwhile (its events go nowhere); then the gateway can be reached again.
      await proxy.cut();
      await leaseAndComplete("waits-reconnect", task.id);
      await proxy.restore();
      expect(await finished).toMatchObject({ id: task.id, status: "SUCCEEDED" });
      expect(reads).toBe(2);
    } finally {
      await proxy.close();
    }
    await socketsClosed();
  }, 60_000);

  it("taskUpdates loses no event while its socket is lost: it resumes after the last one it received, in order, each once", async () => {
    await client.queues.upsert({ name: "live-resumed", mode: "PULL" });
    const { proxy, proxied } = await throughProxy();
    const { connected, events, reading } = readQueue(proxied, "live-resumed", "last");
    try {
      await waitFor(
        "the stream to hear a probe",
        async () => {
          if (events.length > 0) return true;
          await client.tasks.submit({ type: "probe", queue: "live-resumed", delaySeconds: 3600 });
          return false;
        },
        20_000,
        250,
      );
      const heardBefore = events.length;
      // The socket is lost; five tasks are submitted and one cancelled meanwhile; then the gateway can be reached again.
      await proxy.cut();
      const away = [];
      for (let i = 0; i < 5; i++) away.push(await client.tasks.submit({ type: "away", queue: "live-resumed", delaySeconds: 3600 }));
      await client.tasks.cancel((away[0] as { id: string }).id);
      await proxy.restore();
      await waitFor("the socket to be made again", () => connected.includes(true), 20_000);
      await client.tasks.submit({ type: "last", queue: "live-resumed", delaySeconds: 3600 });
      await reading;
      const after = events.slice(heardBefore).map((e) => [e.taskId, e.status]);
      expect(after).toEqual([...away.map((t) => [t.id, "SCHEDULED"]), [(away[0] as { id: string }).id, "CANCELLED"], [expect.any(String), "SCHEDULED"]]);
      const ids = events.map((e) => BigInt(e.id));
      expect(ids.every((id, i) => i === 0 || id > (ids[i - 1] as bigint))).toBe(true);
    } finally {
      await proxy.close();
    }
    await socketsClosed();
  }, 60_000);

  it("drops a socket the network lost without a close once a ping goes unanswered, makes it again, and the stream goes on", async () => {
    await client.queues.upsert({ name: "live-silenced", mode: "PULL" });
    const { proxy, proxied } = await throughProxy({ liveKeepAliveMs: 500, livePongTimeoutMs: 1_000 });
    const { connected, events, reading } = readQueue(proxied, "live-silenced", "after");
    // Probes until one is heard: the gateway acknowledges no subscribe, so this is when the stream listens.
    const heard = (type: string) =>
      waitFor(
        `the stream to hear a "${type}" task`,
        async () => {
          if (events.some((e) => e.task.type === type)) return true;
          await client.tasks.submit({ type, queue: "live-silenced", delaySeconds: 3600 });
          return false;
        },
        20_000,
        250,
      );
    try {
      await heard("before");
      expect(connected[0]).toBe(false);
      // Neither end sees a close, a reset or a byte from now on: without pings the loop would wait forever.
      proxy.silence();
      await waitFor("the socket to be made again", () => connected.includes(true), 20_000);
      await heard("after");
      await reading;
    } finally {
      await proxy.close();
    }
    await socketsClosed();
  }, 60_000);

  it("ends the stream after its retries when the gateway accepts the connection and never answers the upgrade", async () => {
    const { proxy, proxied } = await throughProxy({ liveRetryAttempts: 1, livePongTimeoutMs: 500 });
    await proxy.hang();
    try {
      // Without a handshake timeout this waited for the signal (ABORTED), however long it was.
      const updates = proxied.live.taskUpdates({ queue: "live" }, { signal: AbortSignal.timeout(30_000) });
      const error = await sdkRejection(updates.next());
      expect(error.code).toBe("NETWORK_ERROR");
      expect(error.message).toMatch(/handshake has timed out, given up after 1 reconnect attempt$/);

      // Aborted while a socket is still being made: ABORTED, not the socket's failure, and no unhandled rejection (vitest fails the run on one).
      const controller = new AbortController();
      const aborted = proxied.live.taskUpdates({ queue: "live" }, { signal: controller.signal });
      const next = aborted.next();
      setTimeout(() => controller.abort(new Error("caller gave up")), 100);
      expect((await sdkRejection(next)).code).toBe("ABORTED");
    } finally {
      await proxy.close();
    }
  }, 60_000);

  it("waitUntilFinished rejects TIMEOUT after timeoutMs and ABORTED on the signal, its socket closed", async () => {
    const task = await client.tasks.submit({ type: "never", queue: "waits", delaySeconds: 3600 });
    const started = Date.now();
    const timedOut = await sdkRejection(client.tasks.waitUntilFinished(task.id, { timeoutMs: 1_500, resyncMs: NO_RESYNC }));
    expect(timedOut.code).toBe("TIMEOUT");
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_400);
    expect(Date.now() - started).toBeLessThan(15_000);
    await socketsClosed();

    const controller = new AbortController();
    const readsBefore = taskReads;
    const aborted = client.tasks.waitUntilFinished(task.id, { signal: controller.signal, resyncMs: NO_RESYNC });
    await waitFor("the wait's first read", () => taskReads > readsBefore, 10_000);
    controller.abort(new Error("caller gave up"));
    expect((await sdkRejection(aborted)).code).toBe("ABORTED");
    await socketsClosed();
  }, 60_000);
});
