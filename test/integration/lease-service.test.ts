/**
 * LeaseService (gateway) on a real Postgres and Redis: a long-polling lease
 * that a submission wakes leases at once, without reading its queue again
 * (one round trip fewer between a task's doorbell and its start), and a
 * change to the queue made while it waits still applies within a second.
 * Statements are counted on the lease's own connection (pg_prepared_statements).
 */
import { randomBytes } from "node:crypto";
import { normalizeTaskSpec, parseInput, submitTaskInputSchema } from "@tasklane/core";
import { createDatabase, submitTasks, type Database } from "@tasklane/db";
import { createKeySpace, createRedis, FleetLimits } from "@tasklane/queue";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LeaseService, type LeaseArgs } from "../../apps/gateway/src/services/lease-service.js";
import { PullDoorbell } from "../../apps/gateway/src/services/pull-doorbell.js";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";
import { seedTenant } from "../helpers/seed.js";

const REDIS_URL = "redis://127.0.0.1:6379/0";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let t: TestDatabase;
/** The lease service's only connection, so its statements can be counted. */
let single: Database;
const prefix = `tl-lease-${randomBytes(4).toString("hex")}`;
const publisher = createRedis(REDIS_URL, "lease-test-pub");
const subscriber = createRedis(REDIS_URL, "lease-test-sub");
const doorbell = new PullDoorbell(publisher, subscriber, `${prefix}:pull-doorbell`);
let leases: LeaseService;

/** Executions of the prepared statements of the lease's connection whose text matches `pattern` (a POSIX regex). */
async function executions(pattern: string): Promise<number> {
  const res = await single.pool.query<{ n: string }>(
    "SELECT coalesce(sum(generic_plans + custom_plans), 0) AS n FROM pg_prepared_statements WHERE statement ~ $1",
    [pattern],
  );
  return Number(res.rows[0]?.n ?? 0);
}

/** Any read of a queue by its name. */
const QUEUE_READ = "FROM queues.*name = \\$2";
const args = (queue: string): LeaseArgs => ({ queue, workerId: "w", max: 10, leaseSeconds: 30, waitSeconds: 5, startAheadMs: 0 });

async function submitOne(tenantId: string, queue: string): Promise<void> {
  const spec = normalizeTaskSpec(parseInput(submitTaskInputSchema, { type: "t", queue }), Date.now());
  await submitTasks(t.db, tenantId, [spec], { horizonMs: 60_000 });
}

beforeAll(async () => {
  t = await createTestDatabase("lease");
  single = createDatabase({ url: t.url, max: 1, applicationName: "tasklane-test" });
  leases = new LeaseService({
    db: single,
    doorbell,
    dispatch: async () => undefined,
    horizonMs: 60_000,
    agingSeconds: 60,
    limits: new FleetLimits(publisher, createKeySpace(prefix)),
  });
  // The first arm() subscribes; rings reach the service once that is done.
  const first = doorbell.arm("que_warm");
  await first.wait(1);
  first.disarm();
});

afterAll(async () => {
  doorbell.close();
  publisher.disconnect();
  await single?.close();
  await t?.drop();
});

describe("LeaseService", () => {
  it("leases a task whose doorbell rang while it waited, without reading the queue again", async () => {
    const { tenantId, defaultQueueId } = await seedTenant(t.db);
    const readsBefore = await executions(QUEUE_READ);
    const leasing = leases.lease(tenantId, args("default"));
    await sleep(150); // the call has found nothing and waits on the doorbell
    await submitOne(tenantId, "default");
    await doorbell.ring([defaultQueueId]);
    const leased = await leasing;
    expect(leased.map((l) => l.task.queueId)).toEqual([defaultQueueId]);
    // One read when the call began; the wake-up, well within a second of it, leased straight away.
    expect((await executions(QUEUE_READ)) - readsBefore).toBe(1);
  });

  it("applies a change to the queue made during a long poll within a second: a queue turned PUSH is refused", async () => {
    const { tenantId } = await seedTenant(t.db);
    const startedAt = Date.now();
    const leasing = leases.lease(tenantId, args("default")).then(
      () => "leased",
      (error: unknown) => error,
    );
    await sleep(100);
    await t.db.pool.query("UPDATE queues SET mode = 'PUSH', endpoint_url = 'https://example.com/hook' WHERE tenant_id = $1 AND name = 'default'", [tenantId]);
    const outcome = await leasing;
    expect(outcome).toMatchObject({ message: expect.stringContaining("is a PUSH queue") });
    // Re-read after at most a second of reuse, then refused on the next look (every POLL_MS at most).
    expect(Date.now() - startedAt).toBeLessThan(3_000);
  });
});
