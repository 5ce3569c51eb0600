/**
 * Resumed subscriptions (`taskUpdated(after:)`): a real gateway in-process,
 * the notifier process (the event relay), a real graphql-ws client. Tasks
 * are PULL tasks changed through the API (submitted, cancelled), so no
 * scheduler or worker runs.
 *
 * What is checked against Postgres: the events a resumed subscription sends
 * are exactly the tenant's task_events rows after the cursor (narrowed as
 * asked), in id order, none twice, then live ones.
 */
import { createDatabase } from "@tasklane/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor, type AppProcess } from "../helpers/app-process.js";
import { useGateway } from "../helpers/gateway-fixture.js";
import { httpToWs, openSubscription, type LiveSubscription } from "../helpers/graphql-ws-client.js";
import { asTenant, createTenant, type CreatedTenant } from "../helpers/platform.js";
import { startTestNotifier } from "../helpers/test-notifier.js";

interface EventView {
  taskUpdated: { id: string; taskId: string; status: string; previousStatus: string | null; task: { id: string; queue: string } };
}

const SUBSCRIPTION = `subscription ($taskId: ID, $queue: String, $after: ID) {
  taskUpdated(taskId: $taskId, queue: $queue, after: $after) { id taskId status previousStatus task { id queue } }
}`;

describe("taskUpdated(after:) resumes a feed", () => {
  /** Closed after everything else, the fixture's gateways included: after hooks run last-registered first. */
  const closeAfter: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const close of closeAfter) await close();
  });
  const platform = useGateway();
  let notifier: AppProcess;
  let a: CreatedTenant;
  let b: CreatedTenant;
  const open: LiveSubscription<unknown>[] = [];

  beforeAll(async () => {
    notifier = startTestNotifier(platform.database, platform.redis);
    a = await createTenant(platform.gateway);
    b = await createTenant(platform.gateway);
    await asTenant(platform.gateway, a)(`mutation { upsertQueue(input: { name: "other", mode: PULL }) { name } }`);
  }, 60_000);

  afterAll(async () => {
    await Promise.all(open.map((s) => s.close().catch(() => undefined)));
    await notifier?.stop();
  });

  function subscribe(tenant: CreatedTenant, variables: Record<string, unknown> = {}): LiveSubscription<EventView> {
    const sub = openSubscription<EventView>(httpToWs(platform.gateway.url), `Bearer ${tenant.apiKey}`, SUBSCRIPTION, variables);
    open.push(sub as LiveSubscription<unknown>);
    return sub;
  }

  async function submit(tenant: CreatedTenant, queue = "default"): Promise<string> {
    const data = await asTenant(platform.gateway, tenant)<{ submitTask: { id: string } }>(
      `mutation ($q: String!) { submitTask(input: { type: "resume.job", queue: $q }) { id } }`,
      { q: queue },
    );
    return data.submitTask.id;
  }

  async function cancel(tenant: CreatedTenant, id: string): Promise<void> {
    await asTenant(platform.gateway, tenant)(`mutation ($id: ID!) { cancelTask(id: $id) { id } }`, { id });
  }

  /** The tenant's events after `after` as Postgres has them (narrowed by task or queue name), ascending. */
  async function eventsInPostgres(tenant: CreatedTenant, after: string, narrow: { taskId?: string; queue?: string } = {}): Promise<Array<{ id: string; taskId: string; status: string }>> {
    const res = await platform.database.db.pool.query<{ id: string; task_id: string; to_status: string }>(
      `SELECT e.id::text AS id, e.task_id, e.to_status FROM task_events e JOIN tasks t ON t.id = e.task_id JOIN queues q ON q.id = t.queue_id
        WHERE e.tenant_id = $1 AND e.id > $2::bigint AND ($3::text IS NULL OR e.task_id = $3) AND ($4::text IS NULL OR q.name = $4)
        ORDER BY e.id`,
      [tenant.tenantId, after, narrow.taskId ?? null, narrow.queue ?? null],
    );
    return res.rows.map((r) => ({ id: r.id, taskId: r.task_id, status: r.to_status }));
  }

  const view = (vs: EventView[]) => vs.map((v) => ({ id: v.taskUpdated.id, taskId: v.taskUpdated.taskId, status: v.taskUpdated.status }));

  /**
   * A subscription is live once an event of a task submitted after it has arrived (a probe sent
   * before it listened is not heard: another is sent). Answers that event's id, a cursor.
   */
  async function untilLive(sub: LiveSubscription<EventView>, tenant: CreatedTenant): Promise<string> {
    for (let i = 0; i < 15; i++) {
      const probe = await submit(tenant);
      const heard = await sub.until("the probe's event", (vs) => vs.some((v) => v.taskUpdated.taskId === probe), 2_000).catch(() => null);
      const event = heard?.find((v) => v.taskUpdated.taskId === probe);
      if (event !== undefined) return event.taskUpdated.id;
    }
    throw new Error("the subscription never heard a probe");
  }

  it("sends what happened while the client was away, in id order and each once, then live events; the ids are the audit trail's", async () => {
    const first = subscribe(a);
    const cursor = await untilLive(first, a);
    await first.close();

    // Away: changes to tenant a's tasks in two queues, and tenant b's.
    const t1 = await submit(a);
    const t2 = await submit(a, "other");
    await cancel(a, t1);
    await submit(b);
    const missed = await eventsInPostgres(a, cursor);
    expect(missed.map((e) => [e.taskId, e.status])).toEqual([
      [t1, "QUEUED"],
      [t2, "QUEUED"],
      [t1, "CANCELLED"],
    ]);

    const resumed = subscribe(a, { after: cursor });
    await resumed.until("the missed events", (vs) => vs.length >= missed.length);
    const t3 = await submit(a);
    await resumed.until("a live event after them", (vs) => vs.some((v) => v.taskUpdated.taskId === t3));
    expect(view(resumed.values)).toEqual([...missed, ...(await eventsInPostgres(a, (missed.at(-1) as { id: string }).id))]);
    expect(view(resumed.values).at(-1)).toMatchObject({ taskId: t3, status: "QUEUED" });

    // TaskEvent.id is TaskAuditEvent.id of the same change.
    const audit = await asTenant(platform.gateway, a)<{ task: { events: Array<{ id: string; status: string }> } }>(
      `query ($id: ID!) { task(id: $id) { events { id status } } }`,
      { id: t1 },
    );
    const cancelled = resumed.values.find((v) => v.taskUpdated.taskId === t1 && v.taskUpdated.status === "CANCELLED");
    expect(audit.task.events.find((e) => e.status === "CANCELLED")?.id).toBe(cancelled?.taskUpdated.id);
  });

  it("narrowed to a task or a queue, sends only that task's or that queue's events after the cursor", async () => {
    const watcher = subscribe(a);
    const cursor = await untilLive(watcher, a);
    const task = await submit(a);
    const elsewhere = await submit(a, "other");
    await cancel(a, task);
    await cancel(a, elsewhere);
    await watcher.until("all four events", (vs) => vs.filter((v) => v.taskUpdated.taskId === task || v.taskUpdated.taskId === elsewhere).length === 4);

    const byTask = subscribe(a, { taskId: task, after: cursor });
    const byQueue = subscribe(a, { queue: "other", after: cursor });
    await byTask.until("the task's two events", (vs) => vs.length >= 2);
    await byQueue.until("the queue's two events", (vs) => vs.length >= 2);
    // A live event of each narrowing, so that nothing else can be on its way before it.
    await cancel(a, await submit(a, "other"));
    await byQueue.until("the live events", (vs) => vs.length >= 4);
    expect(view(byTask.values)).toEqual(await eventsInPostgres(a, cursor, { taskId: task }));
    expect(view(byTask.values).map((e) => e.status)).toEqual(["QUEUED", "CANCELLED"]);
    expect(view(byQueue.values)).toEqual(await eventsInPostgres(a, cursor, { queue: "other" }));
    expect(byQueue.values.every((v) => v.taskUpdated.task.queue === "other")).toBe(true);
  });

  it("loses nothing and repeats nothing when it resumes while the tenant's tasks keep changing", async () => {
    const watcher = subscribe(a);
    const cursor = await untilLive(watcher, a);
    await watcher.close();
    // Changes before, during and after the resume, each awaited (bounded: 60 tasks).
    const busy = (async () => {
      for (let i = 0; i < 30; i++) await cancel(a, await submit(a, i % 2 === 0 ? "default" : "other"));
    })();
    const resumed = subscribe(a, { after: cursor });
    await busy;
    const last = await submit(a);
    await resumed.until("the last task's event", (vs) => vs.some((v) => v.taskUpdated.taskId === last), 60_000);
    const expected = await eventsInPostgres(a, cursor);
    expect(expected.length).toBeGreaterThanOrEqual(61);
    expect(view(resumed.values)).toEqual(expected);
  });

  it("follows a list from its eventCursor: every change after the list was read, none missed (list, then watch)", async () => {
    const before = await submit(a);
    const page = await asTenant(platform.gateway, a)<{ tasks: { nodes: Array<{ id: string; status: string }>; eventCursor: string } }>(
      `query { tasks(first: 5) { nodes { id status } eventCursor } }`,
    );
    expect(page.tasks.nodes.find((t) => t.id === before)?.status).toBe("QUEUED");
    const after = await submit(a, "other");
    await cancel(a, before);
    const feed = subscribe(a, { after: page.tasks.eventCursor });
    await feed.until("the cancellation", (vs) => vs.some((v) => v.taskUpdated.taskId === before && v.taskUpdated.status === "CANCELLED"));
    expect(view(feed.values)).toEqual(await eventsInPostgres(a, page.tasks.eventCursor));
    expect(view(feed.values).filter((e) => e.taskId === after).map((e) => e.status)).toEqual(["QUEUED"]);
  });

  it("sends another tenant's events never, whatever the cursor", async () => {
    const watcher = subscribe(b, { after: "0" });
    const own = await submit(b);
    await watcher.until("b's own event", (vs) => vs.some((v) => v.taskUpdated.taskId === own));
    const events = await eventsInPostgres(b, "0");
    expect(view(watcher.values)).toEqual(events);
    const tenantA = await platform.database.db.pool.query(`SELECT count(*)::int AS n FROM task_events WHERE tenant_id = $1`, [a.tenantId]);
    expect(tenantA.rows[0].n).toBeGreaterThan(0);
  });

  it("a tenant resuming many feeds at once has their catch-up reads of the log made one at a time on a gateway, and their tasks read a chunk of events at a time", async () => {
    // A gateway whose database tells how many catch-up reads of the whole log are out at once.
    const db = createDatabase({ url: platform.database.url, applicationName: "tasklane-test-replay-pages" });
    let out = 0;
    let mostOut = 0;
    let reads = 0;
    const textOf = (config: unknown) => (typeof config === "object" && config !== null && "text" in config ? String(config.text) : String(config));
    // And how many reads of tasks by id its clients make (tenant-scoped reads run in a transaction on a client).
    let taskReads = 0;
    db.pool.on("connect", (client) => {
      const clientQuery = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
      client.query = ((...args: unknown[]) => {
        if (textOf(args[0]).includes("ON q.id = t.queue_id WHERE t.id =")) taskReads += 1;
        return clientQuery(...args);
      }) as typeof client.query;
    });
    const query = db.pool.query.bind(db.pool) as (...args: unknown[]) => Promise<unknown>;
    db.pool.query = ((...args: unknown[]) => {
      const text = textOf(args[0]);
      if (!text.includes("h.read_to")) return query(...args);
      reads += 1;
      out += 1;
      mostOut = Math.max(mostOut, out);
      return query(...args).finally(() => (out -= 1));
    }) as typeof db.pool.query;
    const gateway = await platform.startAnother({ deps: { db } });
    const feeds: LiveSubscription<EventView>[] = [];
    try {
      const watcher = subscribe(a);
      const cursor = await untilLive(watcher, a);
      await watcher.close();
      // 5,100 events after the cursor: each feed's catch-up walks the log in more than one read of 5,000 ids.
      const submitMany = `mutation ($inputs: [SubmitTaskInput!]!) { submitTasks(inputs: $inputs) { id } }`;
      for (const size of [1_000, 1_000, 1_000, 1_000, 1_000, 100]) {
        await asTenant(gateway, a)(submitMany, { inputs: Array.from({ length: size }, () => ({ type: "resume.bulk", queue: "other", delaySeconds: 3600 })) });
      }
      // Once the relay has passed them, they can only be read back (a relay still behind would publish them live).
      await waitFor("the relay to pass the new events", async () => {
        const res = await platform.database.db.pool.query<{ passed: boolean }>(
          `SELECT (SELECT last_event_id FROM event_relay_cursors) >= (SELECT max(id) FROM task_events) AS passed`,
        );
        return res.rows[0]?.passed === true;
      }, 20_000, 50);
      feeds.push(...Array.from({ length: 2 }, () => openSubscription<EventView>(httpToWs(gateway.url), `Bearer ${a.apiKey}`, SUBSCRIPTION, { after: cursor })));
      for (const feed of feeds) await feed.until("5,100 events read back", (vs) => vs.length >= 5_100, 60_000);
      expect(reads).toBeGreaterThanOrEqual(4);
      expect(mostOut).toBe(1);
      for (const feed of feeds) expect(view(feed.values)).toEqual(await eventsInPostgres(a, cursor));
      // Each event with its own task, the tasks read a chunk of events at a time, not one read per event.
      for (const feed of feeds) expect(feed.values.filter((v) => v.taskUpdated.task.id !== v.taskUpdated.taskId)).toEqual([]);
      expect(taskReads).toBeGreaterThan(0);
      expect(taskReads).toBeLessThan(1_000);
    } finally {
      await Promise.all(feeds.map((feed) => feed.close()));
      // Once the fixture has closed this gateway, whose close() leaves a pool it was given open.
      closeAfter.push(() => db.close());
    }
  }, 120_000);

  it("answers BAD_USER_INPUT, and sends nothing, for a malformed cursor, one newer than every event, or a tenant's feed too far behind", async () => {
    const errorOf = async (variables: Record<string, unknown>) => {
      const sub = subscribe(a, variables);
      await waitFor("the subscription's error", () => sub.errors.length > 0, 10_000, 20);
      expect(sub.values).toEqual([]);
      return sub.errors[0];
    };
    expect((await errorOf({ after: "x1" }))?.extensions?.code).toBe("BAD_USER_INPUT");
    expect((await errorOf({ after: "-1" }))?.extensions?.code).toBe("BAD_USER_INPUT");
    const future = await errorOf({ after: "9000000000" });
    expect(future?.extensions).toMatchObject({ code: "BAD_USER_INPUT", reason: "UNKNOWN_EVENT" });

    // More than 200,000 ids behind: the sequence moved on as if that many events had been written.
    const task = await submit(a);
    const [old] = await eventsInPostgres(a, "0", { taskId: task });
    await platform.database.db.pool.query(`SELECT setval(pg_get_serial_sequence('task_events', 'id'), nextval(pg_get_serial_sequence('task_events', 'id')) + 250000)`);
    const tooFar = await errorOf({ after: String(BigInt((old as { id: string }).id) - 1n) });
    expect(tooFar?.extensions).toMatchObject({ code: "BAD_USER_INPUT", reason: "RESUME_TOO_FAR" });
    // One task's feed reads by its own index: no such bound.
    const byTask = subscribe(a, { taskId: task, after: String(BigInt((old as { id: string }).id) - 1n) });
    await byTask.until("the task's creation", (vs) => vs.length === 1);
    expect(view(byTask.values)).toEqual([{ id: (old as { id: string }).id, taskId: task, status: "QUEUED" }]);
  });
});
