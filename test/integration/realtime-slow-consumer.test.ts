/**
 * A subscriber that stops reading during a burst: the gateway ends its
 * subscription once 10,000 events wait for it, and the client must be able
 * to tell that it lost events (QA saw a plain `complete` after 253 of
 * 15,000). The gateway runs in-process with the real event relay, Postgres
 * and Redis; the slow client is a raw graphql-ws socket whose TCP reads are
 * paused.
 *
 * No sleeps decide the outcome: a second, reading subscription on another
 * queue hears a marker task submitted after the burst, and the hub hands
 * events to its listeners in the order they arrive, so once the marker has
 * arrived the whole burst has reached the slow subscription too.
 */
import { Redis } from "ioredis";
import { pino } from "pino";
import { Registry } from "prom-client";
import WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEventRelay, type EventRelay } from "@tasklane/notifier/relay/event-relay";
import { createRelayMetrics } from "@tasklane/notifier/relay/relay-metrics";
import { createKeySpace, createRedis } from "@tasklane/queue";
import { waitFor } from "../helpers/app-process.js";
import { useGateway } from "../helpers/gateway-fixture.js";
import { httpToWs, openSubscription, type LiveSubscription } from "../helpers/graphql-ws-client.js";
import { createTenant, gql } from "../helpers/platform.js";

/** 15 calls of 1,000: as QA's burst, comfortably past the 10,000 the gateway holds plus what the sockets buffer. */
const BURST_CALLS = 15;
/** A long type, selected under several aliases: ~1.7 KB per event, so kernel buffers hold few of them. */
const LONG_TYPE = `rt.flood.${"x".repeat(190)}`;
const BLOATED = Array.from({ length: 8 }, (_, i) => `t${i}: task { type }`).join(" ");

interface Frame {
  id?: string;
  type: string;
  payload?: unknown;
}

describe("realtime: a subscriber that stops reading", () => {
  const platform = useGateway();
  let publisher: Redis;
  let relay: EventRelay;
  const sockets: WebSocket[] = [];
  const live: LiveSubscription<unknown>[] = [];

  beforeAll(async () => {
    publisher = createRedis(platform.redis.url, "test-relay-pub");
    relay = startEventRelay({
      databaseUrl: platform.database.url,
      redis: publisher,
      keys: createKeySpace(platform.redis.prefix),
      log: pino({ level: process.env.TEST_LOG_LEVEL ?? "silent" }),
      metrics: createRelayMetrics(new Registry()),
    });
    await waitFor("relay active", () => relay.active, 10_000);
  });

  afterAll(async () => {
    for (const s of sockets) s.terminate();
    await Promise.all(live.map((l) => l.close()));
    await relay?.stop();
    publisher?.disconnect();
  });

  async function call<T>(key: string, query: string, variables: Record<string, unknown>): Promise<T> {
    const res = await gql<T>(platform.gateway.url, query, variables, key);
    if (!res.data) throw new Error(JSON.stringify(res.errors));
    return res.data;
  }

  it("ends the subscription with an OVERLOADED error (reason SLOW_CONSUMER), not a plain complete", async () => {
    const { apiKey } = await createTenant(platform.gateway, undefined, { apiRatePerSecond: 100_000, apiBurst: 100_000 });
    await call(apiKey, `mutation { upsertQueue(input: { name: "marker", mode: PULL }) { name } }`, {});
    const submitOne = async (queue: string) =>
      (await call<{ submitTask: { id: string } }>(apiKey, `mutation ($i: SubmitTaskInput!) { submitTask(input: $i) { id } }`, { i: { type: "rt.marker", queue } })).submitTask.id;

    // The slow client: every event of the tenant, read until the burst starts.
    const frames: Frame[] = [];
    const ws = new WebSocket(httpToWs(platform.gateway.url), "graphql-transport-ws");
    sockets.push(ws);
    ws.on("message", (data: Buffer) => frames.push(JSON.parse(data.toString()) as Frame));
    await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
    ws.send(JSON.stringify({ type: "connection_init", payload: { authorization: `Bearer ${apiKey}` } }));
    await waitFor("connection_ack", () => frames.some((f) => f.type === "connection_ack"), 10_000, 10);
    ws.send(JSON.stringify({ id: "slow", type: "subscribe", payload: { query: `subscription { taskUpdated { taskId status ${BLOATED} } }` } }));

    // The reading client: the marker queue only, so the burst never queues up behind it.
    const reader = openSubscription<{ taskUpdated: { taskId: string } }>(httpToWs(platform.gateway.url), `Bearer ${apiKey}`, `subscription { taskUpdated(queue: "marker") { taskId } }`);
    live.push(reader as LiveSubscription<unknown>);

    // Both subscriptions are listening once both have heard the probe.
    const probe = await submitOne("marker");
    await reader.until("reader hears the probe", (v) => v.some((e) => e.taskUpdated.taskId === probe));
    await waitFor("slow client hears the probe", () => frames.some((f) => f.id === "slow" && JSON.stringify(f.payload).includes(probe)), 30_000, 10);

    (ws as unknown as { _socket: { pause(): void; resume(): void } })._socket.pause();
    const inputs = Array.from({ length: 1_000 }, () => ({ type: LONG_TYPE }));
    for (let i = 0; i < BURST_CALLS; i++) {
      await call(apiKey, `mutation ($i: [SubmitTaskInput!]!) { submitTasks(inputs: $i) { id } }`, { i: inputs });
    }
    const marker = await submitOne("marker");
    await reader.until("reader hears the marker after the burst", (v) => v.some((e) => e.taskUpdated.taskId === marker), 60_000);

    (ws as unknown as { _socket: { pause(): void; resume(): void } })._socket.resume();
    await waitFor("the slow subscription ends", () => frames.some((f) => f.id === "slow" && (f.type === "error" || f.type === "complete")), 60_000, 20);
    const delivered = frames.filter((f) => f.id === "slow" && f.type === "next").length;
    const end = frames.find((f) => f.id === "slow" && (f.type === "error" || f.type === "complete"));
    expect(delivered).toBeLessThan(BURST_CALLS * 1_000);
    expect(end).toMatchObject({
      type: "error",
      payload: [{ message: expect.stringContaining("later events were dropped"), extensions: { code: "OVERLOADED", reason: "SLOW_CONSUMER", retryAfterSeconds: 1 } }],
    });
    // The socket itself stays open: only the slow operation ended.
    expect(ws.readyState).toBe(WebSocket.OPEN);
  });
});
