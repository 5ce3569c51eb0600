/**
 * The task-event relay against real Postgres and Redis, in-process: events
 * leave in id order even when transactions commit out of order, a rolled-back
 * id does not stall the feed, a restart resumes from the cursor, and when the
 * active relay's session dies a standby takes over without losing events.
 * Only tenants marked as listened to get their events published; the relay
 * walks over the others' and moves its cursor past them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type pg from "pg";
import { pino } from "pino";
import { Registry } from "prom-client";
import { Redis } from "ioredis";
import { normalizeTaskSpec, parseInput, submitTaskInputSchema } from "@tasklane/core";
import { MAX_LISTENING_FILTER, cancelTask, readTaskEventsAfter, submitTasks } from "@tasklane/db";
import { EventListenerRegistry, createKeySpace, createRedis, decodeTaskEvents, type TaskEventMessage } from "@tasklane/queue";
import { startEventRelay, type EventRelay, type EventRelayOptions } from "@tasklane/notifier/relay/event-relay";
import { createRelayMetrics } from "@tasklane/notifier/relay/relay-metrics";
import { waitFor } from "../helpers/app-process.js";
import { createTestRedis, type TestRedis } from "../helpers/platform.js";
import { seedTenant } from "../helpers/seed.js";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";

let tdb: TestDatabase;
let testRedis: TestRedis;
let publisher: Redis;
let listener: Redis;
let tenantId: string;
let registry: EventListenerRegistry;
/** Marks that outlast the whole file (the default 30 s could lapse mid-run). */
const LONG_TTL_MS = 15 * 60_000;
const received: TaskEventMessage[] = [];
/** Events per Redis message, in arrival order. */
const messageSizes: number[] = [];
const running = new Set<EventRelay>();

function relay(listeners?: EventRelayOptions["listeners"], options: Partial<EventRelayOptions> = {}): EventRelay {
  const r = startEventRelay({
    ...(listeners ? { listeners } : {}),
    databaseUrl: tdb.url,
    redis: publisher,
    keys: createKeySpace(testRedis.prefix),
    log: pino({ level: process.env.TEST_LOG_LEVEL ?? "silent" }),
    metrics: createRelayMetrics(new Registry()),
    standbyMs: 100,
    ...options,
  });
  running.add(r);
  return r;
}

async function stop(r: EventRelay): Promise<void> {
  running.delete(r);
  await r.stop();
}

async function submit(tenant = tenantId): Promise<string> {
  const spec = normalizeTaskSpec(parseInput(submitTaskInputSchema, { type: "relay.test" }), Date.now());
  const { tasks } = await submitTasks(tdb.db, tenant, [spec], { horizonMs: 0, actor: "test" });
  return tasks[0]!.id;
}

const eventIds = async (): Promise<string[]> =>
  (await tdb.db.pool.query<{ id: string }>("SELECT e.id::text AS id FROM task_events e ORDER BY e.id")).rows.map((r) => r.id);

const receivedIds = () => received.map((e) => e.eventId);

/** Waits until every committed event has been received (and nothing else). */
async function caughtUp(): Promise<void> {
  const ids = await eventIds();
  await waitFor(`events up to ${ids.at(-1)} relayed`, () => receivedIds().at(-1) === ids.at(-1), 10_000);
}

/** An event inserted inside an open transaction, the way the transitions do (tasks row first, so the xid exists). */
async function openEventTransaction(taskId: string): Promise<pg.PoolClient> {
  const client = await tdb.db.pool.connect();
  await client.query("BEGIN");
  await client.query("UPDATE tasks SET updated_at = now() WHERE id = $1", [taskId]);
  await client.query(
    `INSERT INTO task_events (task_id, tenant_id, from_status, to_status, attempt, lease_generation, actor)
     VALUES ($1, $2, 'QUEUED', 'QUEUED', 0, 0, 'test')`,
    [taskId, tenantId],
  );
  return client;
}

beforeAll(async () => {
  tdb = await createTestDatabase("relay");
  testRedis = createTestRedis();
  publisher = createRedis(testRedis.url, "test-relay-pub");
  listener = new Redis(testRedis.url);
  await listener.psubscribe(`${testRedis.prefix}:events:*`);
  listener.on("pmessage", (_pattern: string, channel: string, message: string) => {
    const events = decodeTaskEvents(message);
    if (events === null) throw new Error(`undecodable message on ${channel}`);
    for (const event of events) expect(channel).toBe(`${testRedis.prefix}:events:${event.tenantId}`);
    messageSizes.push(events.length);
    received.push(...events);
  });
  ({ tenantId } = await seedTenant(tdb.db));
  registry = new EventListenerRegistry(publisher, createKeySpace(testRedis.prefix), LONG_TTL_MS);
  await registry.register([tenantId]);
});

const relayCursor = async (): Promise<string> =>
  (await tdb.db.pool.query<{ id: string }>("SELECT last_event_id::text AS id FROM event_relay_cursors")).rows[0]?.id ?? "none";

afterAll(async () => {
  await Promise.all([...running].map((r) => r.stop()));
  listener?.disconnect();
  publisher?.disconnect();
  await testRedis?.cleanup();
  await tdb?.drop();
});

describe("event relay", () => {
  it("publishes events on their tenant's channel as compact JSON, in id order", async () => {
    const r = relay();
    await waitFor("relay active", () => r.active, 10_000);
    const taskId = await submit();
    await cancelTask(tdb.db, tenantId, taskId, "test");
    await caughtUp();
    const mine = received.filter((e) => e.taskId === taskId);
    expect(mine.map((e) => `${e.from ?? "-"}>${e.to}`)).toEqual(["->QUEUED", "QUEUED>CANCELLED"]);
    expect(mine[0]).toMatchObject({ tenantId, workflowId: null, queueId: expect.stringMatching(/^que_/) });
    expect(new Date(mine[1]!.at).getTime()).toBeGreaterThan(0);
    await stop(r);
  });

  it("holds back a later commit until an earlier id commits, then sends both in id order", async () => {
    const r = relay();
    await waitFor("relay active", () => r.active, 10_000);
    const early = await submit();
    await caughtUp();
    const client = await openEventTransaction(early); // draws id N, not committed
    try {
      const late = await submit(); // draws N+1 and commits first
      await new Promise((res) => setTimeout(res, 400));
      expect(received.some((e) => e.taskId === late)).toBe(false);
      await client.query("COMMIT");
      await caughtUp();
      const tail = received.slice(-2).map((e) => e.taskId);
      expect(tail).toEqual([early, late]);
    } finally {
      client.release();
    }
    await stop(r);
  });

  it("steps over an id whose transaction rolled back", async () => {
    const r = relay();
    await waitFor("relay active", () => r.active, 10_000);
    const first = await submit();
    await caughtUp();
    const client = await openEventTransaction(first);
    await client.query("ROLLBACK");
    client.release();
    const after = await submit();
    await waitFor("event after the hole", () => received.some((e) => e.taskId === after), 5_000);
    await stop(r);
  });

  it("resumes from its cursor after a restart: events written while no relay ran are sent, a tenant's batch as one message", async () => {
    const before = received.length;
    const messagesBefore = messageSizes.length;
    const ids = [await submit(), await submit(), await submit()];
    await new Promise((res) => setTimeout(res, 200));
    expect(received.length).toBe(before);
    const r = relay();
    await caughtUp();
    expect(received.slice(before).map((e) => e.taskId)).toEqual(ids);
    // All three were waiting when the relay started: one read, one tenant, one message.
    expect(messageSizes.slice(messagesBefore)).toEqual([3]);
    await stop(r);
  });

  it("one relay publishes at a time; when its session dies a standby takes over and nothing is lost or repeated", async () => {
    const a = relay();
    await waitFor("one relay active", () => a.active, 10_000);
    const b = relay();
    await new Promise((res) => setTimeout(res, 300));
    expect(b.active).toBe(false);
    const before = received.length;
    const firstBatch = [await submit(), await submit()];
    await caughtUp();
    // Kill the active relay's database session, as a crash or a network cut would.
    const killed = await tdb.db.pool.query(
      `SELECT pg_terminate_backend(l.pid) FROM pg_locks l JOIN pg_database d ON d.oid = l.database
        WHERE l.locktype = 'advisory' AND l.granted AND d.datname = current_database()`,
    );
    expect(killed.rowCount).toBe(1);
    const secondBatch = [await submit(), await submit(), await submit()];
    await caughtUp();
    const got = received.slice(before).map((e) => e.taskId);
    expect(got).toEqual([...firstBatch, ...secondBatch]);
    expect(a.active || b.active).toBe(true);
    await Promise.all([stop(a), stop(b)]);
  });

  it("walks over the events of a tenant nobody listens to: none published, the cursor moves past them", async () => {
    const { tenantId: quiet } = await seedTenant(tdb.db);
    const r = relay();
    await waitFor("relay active", () => r.active, 10_000);
    const before = received.length;
    const quietTasks = [await submit(quiet), await submit(quiet)];
    const heard = await submit();
    await submit(quiet); // the window's last event is the quiet tenant's
    const ids = await eventIds();
    await waitFor("cursor past every event", async () => (await relayCursor()) === ids.at(-1), 10_000);
    expect(received.slice(before).map((e) => e.taskId)).toEqual([heard]);
    expect(received.some((e) => quietTasks.includes(e.taskId) || e.tenantId === quiet)).toBe(false);
    await stop(r);
  });

  it("passes a backlog nobody listens to without walking it: a few polls, whatever its size", async () => {
    let polls = 0; // listening() is read once per poll (and once before the first)
    const listeners = {
      async listening() {
        polls += 1;
        return new Set<string>();
      },
    };
    // Idle polls 200 ms apart, so the count does not grow with how slowly the checks below see the
    // cursor move (a full suite on a busy VM counted 10 at 20 ms apart); a walk polls back to back.
    const r = relay(listeners, { batchSize: 10, idleMs: 200 });
    try {
      await waitFor("relay active", () => r.active, 10_000);
      await submit(); // so the relay has a cursor of its own to be caught up to
      const first = (await eventIds()).at(-1);
      await waitFor("relay caught up", async () => (await relayCursor()) === first, 10_000);
      const specs = Array.from({ length: 1000 }, () => normalizeTaskSpec(parseInput(submitTaskInputSchema, { type: "relay.backlog" }), Date.now()));
      // One transaction: the whole backlog appears at once, and polls while it commits are not counted.
      await submitTasks(tdb.db, tenantId, specs, { horizonMs: 0, actor: "test" });
      const pollsBefore = polls;
      const last = (await eventIds()).at(-1);
      await waitFor("cursor past the backlog", async () => (await relayCursor()) === last, 10_000);
      // The horizon is taken on one poll and passed to on the next. Walking 1,000 events took
      // 100 windows of 10, or 10 of 100 (ten times the window, as the relay read while nobody listened).
      expect(polls - pollsBefore).toBeLessThanOrEqual(6);
    } finally {
      await stop(r);
    }
  });

  it("while nobody listens, does not pass an event whose transaction is still open; a tenant marked after it commits gets it, in order", async () => {
    const marked = new Set<string>();
    const listeners = { listening: async () => new Set(marked) };
    const r = relay(listeners, { idleMs: 20, maxGapWaitMs: 60_000 });
    let open: pg.PoolClient | undefined;
    try {
      await waitFor("relay active", () => r.active, 10_000);
      await submit();
      const first = (await eventIds()).at(-1);
      await waitFor("relay caught up", async () => (await relayCursor()) === first, 10_000);
      const held = await submit();
      const heldFrom = (await eventIds()).at(-1)!;
      await waitFor("relay caught up again", async () => (await relayCursor()) === heldFrom, 10_000);
      open = await openEventTransaction(held); // draws the next id and keeps it uncommitted
      const after = [await submit(), await submit()];
      expect((await eventIds()).filter((id) => BigInt(id) > BigInt(heldFrom))).toHaveLength(2);
      // ~20 polls, each of which would have passed both later events if the open transaction did not hold them.
      await new Promise((resolve) => setTimeout(resolve, 400));
      expect(await relayCursor()).toBe(heldFrom);
      const before = received.length;
      marked.add(tenantId);
      await open.query("COMMIT");
      open.release();
      open = undefined;
      const all = await eventIds();
      await waitFor("every event after the open transaction's, published", () => received.slice(before).some((e) => e.eventId === all.at(-1)), 10_000);
      const mine = received.slice(before);
      expect(mine.map((e) => e.eventId)).toEqual(all.filter((id) => BigInt(id) > BigInt(heldFrom)));
      expect(mine.map((e) => e.taskId)).toEqual([held, ...after]);
    } finally {
      if (open) {
        await open.query("ROLLBACK");
        open.release();
      }
      await stop(r);
    }
  });

  it("while nobody listens, a transaction open past the wait limit holds the cursor no longer than that", async () => {
    const r = relay({ listening: async () => new Set<string>() }, { idleMs: 20, maxGapWaitMs: 300 });
    const open = await openEventTransaction(await submit());
    try {
      await waitFor("relay active", () => r.active, 10_000);
      await submit();
      const last = (await eventIds()).at(-1);
      // Past the open transaction's id only by walking and stepping over it once the wait is over.
      await waitFor("cursor past the open transaction's id", async () => (await relayCursor()) === last, 10_000);
    } finally {
      await open.query("ROLLBACK");
      open.release();
      await stop(r);
    }
  });

  it("publishes what a window held for a tenant marked only after that window was read", async () => {
    const { tenantId: late } = await seedTenant(tdb.db);
    // The first read runs with `late` unmarked; it is marked before the relay reads the marks again,
    // as when a subscription goes live between the two.
    let calls = 0;
    const listeners = {
      async listening() {
        calls += 1;
        if (calls === 2) await registry.register([late]);
        return registry.listening();
      },
    };
    const lateTasks = [await submit(late), await submit(late)];
    const r = relay(listeners);
    await waitFor("the late tenant's events", () => lateTasks.every((id) => received.some((e) => e.taskId === id)), 10_000);
    const mine = received.filter((e) => e.tenantId === late);
    expect(mine.map((e) => e.taskId)).toEqual(lateTasks);
    expect(mine.map((e) => Number(e.eventId))).toEqual([...mine.map((e) => Number(e.eventId))].sort((a, b) => a - b));
    expect(calls).toBeGreaterThanOrEqual(2);
    await stop(r);
  });

  it("polls slowly while nobody listens, and reads at once when a gateway marks a first listener", async () => {
    // A deployment of its own (key prefix), where no tenant is marked.
    const keys = createKeySpace(`${testRedis.prefix}quiet`);
    const wakeups = createRedis(testRedis.url, "test-relay-wakeups");
    const heard = new Redis(testRedis.url);
    const mine: TaskEventMessage[] = [];
    await heard.psubscribe(`${keys.prefix}:events:*`);
    heard.on("pmessage", (_pattern: string, _channel: string, message: string) => mine.push(...(decodeTaskEvents(message) ?? [])));
    const r = startEventRelay({
      databaseUrl: tdb.url,
      redis: publisher,
      wakeups,
      keys,
      log: pino({ level: process.env.TEST_LOG_LEVEL ?? "silent" }),
      metrics: createRelayMetrics(new Registry()),
      standbyMs: 100,
      // Without the announcement a new subscriber would wait this long for its first events.
      unlistenedIdleMs: 120_000,
    });
    running.add(r);
    try {
      await waitFor("relay active", () => r.active, 10_000);
      const { tenantId: first } = await seedTenant(tdb.db);
      await submit(first);
      // Its first read is done and it is in its slow poll (nothing is published for an unmarked tenant).
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(mine).toEqual([]);
      const startedAt = Date.now();
      await new EventListenerRegistry(publisher, keys, LONG_TTL_MS).register([first]);
      const taskId = await submit(first);
      await waitFor("the new listener's event", () => mine.some((e) => e.taskId === taskId), 10_000);
      expect(Date.now() - startedAt).toBeLessThan(10_000);
      expect(mine.every((e) => e.tenantId === first)).toBe(true);
    } finally {
      await stop(r);
      heard.disconnect();
      wakeups.disconnect();
    }
  });

  it("answers a window's events in full for the tenants listed, cursor rows for the rest, and all in full past the list limit", async () => {
    const { tenantId: other } = await seedTenant(tdb.db);
    const from = BigInt((await eventIds()).at(-1) ?? "0");
    const mine = [await submit(), await submit(other), await submit(other), await submit()];
    const windowOf = (listening: string[] | null) => readTaskEventsAfter(tdb.db.pool, from, 100, listening);

    const listed = await windowOf([tenantId]);
    expect(listed.windowSize).toBe(4);
    const full = listed.rows.filter((r) => r.event !== null);
    expect(full.map((r) => r.event?.taskId)).toEqual([mine[0], mine[3]]);
    // The other tenant's two events are not answered: the window's last row is the listed tenant's own.
    expect(listed.rows).toHaveLength(2);
    expect(listed.rows[1]!.prevId).toBe(String(from + 3n));

    const many = [...Array.from({ length: MAX_LISTENING_FILTER }, (_, i) => `ten_absent_${i}`), tenantId];
    expect(listed.inFull).toBe(false);
    for (const answer of [await windowOf(null), await windowOf(many)]) {
      expect(answer.rows.map((r) => r.event?.taskId)).toEqual(mine);
      expect(answer.inFull).toBe(true);
    }
    const none = await windowOf([]);
    expect(none.rows.map((r) => [r.id, r.event])).toEqual([[String(from + 4n), null]]);
  });
});
