/**
 * Caps on what a tenant owns (MAX_QUEUES_PER_TENANT, MAX_SCHEDULES_PER_TENANT,
 * MAX_WEBHOOKS_PER_TENANT): a create past one is QUOTA_EXCEEDED and writes
 * nothing, exactly, however many creates race for the last slots; updates at
 * the cap still work, and a deleted schedule or webhook frees its slot. Rows
 * up to the cap are seeded straight in SQL.
 */
import { MAX_QUEUES_PER_TENANT, MAX_SCHEDULES_PER_TENANT, MAX_WEBHOOKS_PER_TENANT } from "@tasklane/core";
import { describe, expect, it } from "vitest";
import { useGateway } from "../helpers/gateway-fixture.js";
import { codeOf, createTenant, gql, type CreatedTenant, type GqlResponse } from "../helpers/platform.js";

const UPSERT_QUEUE = `mutation ($input: UpsertQueueInput!) { upsertQueue(input: $input) { name concurrency } }`;
const CREATE_SCHEDULE = `mutation ($input: CreateScheduleInput!) { createSchedule(input: $input) { id name } }`;
const UPDATE_SCHEDULE = `mutation ($id: ID!, $input: UpdateScheduleInput!) { updateSchedule(id: $id, input: $input) { id version } }`;
const DELETE_SCHEDULE = `mutation ($id: ID!) { deleteSchedule(id: $id) }`;
const CREATE_WEBHOOK = `mutation ($input: CreateWebhookInput!) { createWebhook(input: $input) { webhook { id } } }`;
const UPDATE_WEBHOOK = `mutation ($id: ID!, $input: UpdateWebhookInput!) { updateWebhook(id: $id, input: $input) { id enabled } }`;
const DELETE_WEBHOOK = `mutation ($id: ID!) { deleteWebhook(id: $id) }`;

/** Concurrent creates racing for the last slots. */
const RACERS = 20;
const SLOTS_LEFT = 5;

describe("caps on a tenant's queues, schedules and webhooks", () => {
  const platform = useGateway({ env: { ALLOW_PRIVATE_TARGETS: "1" } });

  const call = <T = Record<string, unknown>>(tenant: CreatedTenant, query: string, variables: Record<string, unknown>) =>
    gql<T>(platform.gateway.url, query, variables, tenant.apiKey);
  const count = async (sql: string, tenantId: string) => (await platform.database.db.pool.query<{ n: number }>(sql, [tenantId])).rows[0]!.n;
  const queues = (tenantId: string) => count("SELECT count(*)::int AS n FROM queues WHERE tenant_id = $1", tenantId);
  const liveSchedules = (tenantId: string) => count("SELECT count(*)::int AS n FROM schedules WHERE tenant_id = $1 AND deleted_at IS NULL", tenantId);
  const liveWebhooks = (tenantId: string) => count("SELECT count(*)::int AS n FROM webhooks WHERE tenant_id = $1 AND deleted_at IS NULL", tenantId);
  // Twenty requests at once must not meet the API rate limit.
  const tenant = (name: string) => createTenant(platform.gateway, name, { apiRatePerSecond: 1000, apiBurst: 1000 });

  /** Outcomes of the racing creates: how many answered, and the codes of the rest. */
  function tally(replies: GqlResponse<unknown>[]): { created: number; refused: (string | undefined)[] } {
    return { created: replies.filter((r) => r.errors === undefined).length, refused: replies.filter((r) => r.errors !== undefined).map(codeOf) };
  }
  const refusedRest = { created: SLOTS_LEFT, refused: Array.from({ length: RACERS - SLOTS_LEFT }, () => "QUOTA_EXCEEDED") };

  it("queues: 20 racing creates with 5 slots left create exactly 5; past the cap nothing is written; updates at the cap still work", async () => {
    const t = await tenant("queue-cap");
    // The tenant's "default" queue is one of them.
    await platform.database.db.pool.query(
      `INSERT INTO queues (id, tenant_id, name, mode) SELECT 'que_seed' || g || $1, $1, 'seed-' || g, 'PULL' FROM generate_series(1, $2::int) g`,
      [t.tenantId, MAX_QUEUES_PER_TENANT - SLOTS_LEFT - 1],
    );
    const replies = await Promise.all(Array.from({ length: RACERS }, (_, i) => call(t, UPSERT_QUEUE, { input: { name: `race-${i}`, mode: "PULL" } })));
    expect(tally(replies)).toEqual(refusedRest);
    expect(await queues(t.tenantId)).toBe(MAX_QUEUES_PER_TENANT);

    const over = await call(t, UPSERT_QUEUE, { input: { name: "one-more", mode: "PULL" } });
    expect(over.errors?.[0]).toMatchObject({
      message: `A tenant may have at most ${MAX_QUEUES_PER_TENANT} queues`,
      extensions: { code: "QUOTA_EXCEEDED", quota: "queuesPerTenant", limit: MAX_QUEUES_PER_TENANT },
    });
    expect(await queues(t.tenantId)).toBe(MAX_QUEUES_PER_TENANT);

    const updated = await call(t, UPSERT_QUEUE, { input: { name: "default", mode: "PULL", concurrency: 3 } });
    expect(updated.errors).toBeUndefined();
    expect(updated.data).toEqual({ upsertQueue: { name: "default", concurrency: 3 } });
    // Another tenant is not held to this one's count.
    const other = await tenant("queue-cap-other");
    expect((await call(other, UPSERT_QUEUE, { input: { name: "mine", mode: "PULL" } })).errors).toBeUndefined();
  });

  it("schedules: 20 racing creates with 5 slots left create exactly 5; updates at the cap work; a deleted one frees its slot", async () => {
    const t = await tenant("schedule-cap");
    await platform.database.db.pool.query(
      `INSERT INTO schedules (id, tenant_id, name, cron, timezone, enabled, template)
       SELECT 'sch_seed' || g || $1, $1, 'seed-' || g, '0 0 1 1 *', 'UTC', false, '{"type": "seeded", "queue": "default"}'::jsonb
         FROM generate_series(1, $2::int) g`,
      [t.tenantId, MAX_SCHEDULES_PER_TENANT - SLOTS_LEFT],
    );
    // A deleted schedule holds no slot.
    await platform.database.db.pool.query(
      `INSERT INTO schedules (id, tenant_id, name, cron, timezone, enabled, template, deleted_at)
       VALUES ('sch_gone' || $1, $1, 'gone', '0 0 1 1 *', 'UTC', false, '{"type": "seeded", "queue": "default"}'::jsonb, now())`,
      [t.tenantId],
    );
    const input = (name: string) => ({ name, cron: "0 0 1 1 *", task: { type: "yearly" } });
    const replies = await Promise.all(Array.from({ length: RACERS }, (_, i) => call(t, CREATE_SCHEDULE, { input: input(`race-${i}`) })));
    expect(tally(replies)).toEqual(refusedRest);
    expect(await liveSchedules(t.tenantId)).toBe(MAX_SCHEDULES_PER_TENANT);

    const over = await call(t, CREATE_SCHEDULE, { input: input("one-more") });
    expect(over.errors?.[0]).toMatchObject({ extensions: { code: "QUOTA_EXCEEDED", quota: "schedulesPerTenant", limit: MAX_SCHEDULES_PER_TENANT } });
    expect(await liveSchedules(t.tenantId)).toBe(MAX_SCHEDULES_PER_TENANT);
    expect(await count("SELECT count(*)::int AS n FROM schedules WHERE tenant_id = $1", t.tenantId)).toBe(MAX_SCHEDULES_PER_TENANT + 1);

    const created = replies.find((r) => r.errors === undefined)!.data as { createSchedule: { id: string } };
    const updated = await call(t, UPDATE_SCHEDULE, { id: created.createSchedule.id, input: { cron: "0 0 2 1 *" } });
    expect(updated.errors).toBeUndefined();
    expect(updated.data).toMatchObject({ updateSchedule: { version: 2 } });

    expect((await call(t, DELETE_SCHEDULE, { id: created.createSchedule.id })).data).toEqual({ deleteSchedule: true });
    const again = await call(t, CREATE_SCHEDULE, { input: input("one-more") });
    expect(again.errors).toBeUndefined();
    expect(await liveSchedules(t.tenantId)).toBe(MAX_SCHEDULES_PER_TENANT);
  });

  it("webhooks: 20 racing creates with 5 slots left create exactly 5; updates at the cap work; a deleted one frees its slot", async () => {
    const t = await tenant("webhook-cap");
    await platform.database.db.pool.query(
      `INSERT INTO webhooks (id, tenant_id, url, events, secret)
       SELECT 'whk_seed' || g || $1, $1, 'http://127.0.0.1:9/seed', '{task.dead}', 'whsec_x' FROM generate_series(1, $2::int) g`,
      [t.tenantId, MAX_WEBHOOKS_PER_TENANT - SLOTS_LEFT],
    );
    const input = { url: "http://127.0.0.1:9/hook", events: ["task.dead"] };
    const replies = await Promise.all(Array.from({ length: RACERS }, () => call(t, CREATE_WEBHOOK, { input })));
    expect(tally(replies)).toEqual(refusedRest);
    expect(await liveWebhooks(t.tenantId)).toBe(MAX_WEBHOOKS_PER_TENANT);

    const over = await call(t, CREATE_WEBHOOK, { input });
    expect(over.errors?.[0]).toMatchObject({ extensions: { code: "QUOTA_EXCEEDED", quota: "webhooksPerTenant", limit: MAX_WEBHOOKS_PER_TENANT } });
    expect(await liveWebhooks(t.tenantId)).toBe(MAX_WEBHOOKS_PER_TENANT);

    const created = replies.find((r) => r.errors === undefined)!.data as { createWebhook: { webhook: { id: string } } };
    const id = created.createWebhook.webhook.id;
    const updated = await call(t, UPDATE_WEBHOOK, { id, input: { enabled: false } });
    expect(updated.errors).toBeUndefined();
    expect((await call(t, DELETE_WEBHOOK, { id })).data).toEqual({ deleteWebhook: true });
    expect((await call(t, CREATE_WEBHOOK, { input })).errors).toBeUndefined();
    expect(await liveWebhooks(t.tenantId)).toBe(MAX_WEBHOOKS_PER_TENANT);
  });
});
