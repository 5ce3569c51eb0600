/**
 * The notifier's claim (claimDueDeliveries) against a real Postgres, without
 * a notifier: every tenant with due work is found however deep another
 * tenant's backlog, the per-origin cap counts URLs by scheme, host and port,
 * a tenant takes at most its share of the slots while another has due work
 * (all of them alone), a claim walks at most `walkLimit` tenants, from
 * where the last one stopped, round, and two claimers never take the same row.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createLogger } from "@tasklane/config";
import { claimDueDeliveries, originKey, type ClaimOptions, type InFlightCounts } from "@tasklane/db";
import { createDeliveryTick } from "@tasklane/notifier/delivery/delivery-loop";
import { InFlight } from "@tasklane/notifier/delivery/in-flight";
import { createMetrics } from "@tasklane/notifier/metrics";
import { createOutboundAgent } from "@tasklane/outbound";
import { startReceiver } from "../helpers/http-receiver.js";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";
import { seedNotifierTenant } from "./notifier-harness.js";

let tdb: TestDatabase;
const none = (): InFlightCounts => ({ byOrigin: new Map(), byTenant: new Map() });
const options = (over: Partial<ClaimOptions>): ClaimOptions => ({
  limit: 32, lockMs: 15_000, perOriginLimit: 4, tenantShare: 16, inFlight: none(), afterTenant: "", walkLimit: 1_000, ...over,
});
const claim = async (over: Partial<ClaimOptions> = {}) => (await claimDueDeliveries(tdb.db, options(over))).deliveries;

/** `urls.length` due deliveries of `tenantId`, one per URL, due `agoMs` ago and 1 ms apart in that order. */
async function due(tenantId: string, urls: string[], agoMs = 60_000): Promise<void> {
  await tdb.db.pool.query(
    `INSERT INTO webhook_deliveries (id, tenant_id, url, event, body, next_attempt_at)
     SELECT 'dlv_' || md5(random()::text), $1, u, 'task.succeeded', '{}', now() - $3 * interval '1 ms' + n * interval '1 ms'
     FROM unnest($2::text[]) WITH ORDINALITY AS x(u, n)`,
    [tenantId, urls, agoMs],
  );
}
const count = (rows: { tenantId: string }[], tenantId: string) => rows.filter((r) => r.tenantId === tenantId).length;

beforeAll(async () => {
  tdb = await createTestDatabase("claims");
});
afterAll(async () => {
  await tdb?.drop();
});
beforeEach(async () => {
  await tdb.db.pool.query("DELETE FROM webhook_deliveries");
});

describe("claimDueDeliveries", () => {
  it("finds another tenant's one due delivery under a 5,000-deep backlog of one tenant to a busy origin", async () => {
    const a = await seedNotifierTenant(tdb.db);
    const b = await seedNotifierTenant(tdb.db);
    await due(a.tenantId, Array.from({ length: 5_000 }, (_, i) => `http://slow.example:8080/a?i=${i}`), 3_600_000);
    await due(b.tenantId, ["https://b.example/hook"], 10);
    // A tenant whose deliveries all wait for a retry is walked past: nothing of it is claimed.
    const c = await seedNotifierTenant(tdb.db);
    await due(c.tenantId, ["https://c.example/hook", "https://c.example/hook"], -60_000);
    const busy: InFlightCounts = { byOrigin: new Map([[originKey(a.tenantId, "http://slow.example:8080"), 4]]), byTenant: new Map([[a.tenantId, 4]]) };
    const claimed = await claim({ limit: 28, inFlight: busy });
    expect(claimed.map((c) => [c.tenantId, c.origin])).toEqual([[b.tenantId, "https://b.example"]]);
  });

  it("passes over a tenant's rows to an origin at its cap to reach the tenant's other origins", async () => {
    const a = await seedNotifierTenant(tdb.db);
    await due(a.tenantId, Array.from({ length: 1_500 }, (_, i) => `http://slow.example:8080/a?i=${i}`), 3_600_000);
    await due(a.tenantId, ["https://healthy.example/hook", "https://healthy.example/hook"], 10);
    const busy: InFlightCounts = { byOrigin: new Map([[originKey(a.tenantId, "http://slow.example:8080"), 4]]), byTenant: new Map([[a.tenantId, 4]]) };
    const claimed = await claim({ limit: 28, inFlight: busy });
    expect(claimed.map((c) => c.origin)).toEqual(["https://healthy.example", "https://healthy.example"]);
    // Below its cap the origin is not passed over: its oldest row, up to the cap, beside the other origin's.
    const partly: InFlightCounts = { byOrigin: new Map([[originKey(a.tenantId, "http://slow.example:8080"), 3]]), byTenant: new Map([[a.tenantId, 3]]) };
    await tdb.db.pool.query("UPDATE webhook_deliveries SET locked_until = NULL");
    expect((await claim({ limit: 28, inFlight: partly })).map((c) => c.url).sort()).toEqual([
      "http://slow.example:8080/a?i=0", "https://healthy.example/hook", "https://healthy.example/hook",
    ]);
  });

  it("caps a tenant's deliveries per origin, whatever the path, query, case, user info or spelt-out default port", async () => {
    const a = await seedNotifierTenant(tdb.db);
    await due(a.tenantId, [
      ...Array.from({ length: 10 }, (_, i) => `http://127.0.0.1:4000/cb?i=${i}`),
      "HTTP://EX.com:80/a", "http://ex.com/b", "http://user:pw@ex.com/c", "http://ex.com:80/d", "http://ex.com/e",
      "https://ex.com:443/x", "https://ex.com:8443/y",
    ]);
    const claimed = await claim();
    const byOrigin = new Map<string, number>();
    for (const c of claimed) byOrigin.set(c.origin, (byOrigin.get(c.origin) ?? 0) + 1);
    expect(Object.fromEntries(byOrigin)).toEqual({ "http://127.0.0.1:4000": 4, "http://ex.com": 4, "https://ex.com": 1, "https://ex.com:8443": 1 });
    // What this process has in flight counts: 3 running to 127.0.0.1:4000 leave room for 1.
    await tdb.db.pool.query("UPDATE webhook_deliveries SET locked_until = NULL");
    const again = await claim({ inFlight: { byOrigin: new Map([[originKey(a.tenantId, "http://127.0.0.1:4000"), 3]]), byTenant: new Map([[a.tenantId, 3]]) } });
    expect(again.filter((c) => c.origin === "http://127.0.0.1:4000")).toHaveLength(1);
  });

  it("counts the cap per tenant: another tenant's deliveries to the same origin are not held back", async () => {
    const a = await seedNotifierTenant(tdb.db);
    const b = await seedNotifierTenant(tdb.db);
    await due(a.tenantId, Array.from({ length: 10 }, (_, i) => `https://hooks.example/a${i}`), 60_000);
    await due(b.tenantId, ["https://hooks.example/b"], 10);
    const busy: InFlightCounts = { byOrigin: new Map([[originKey(a.tenantId, "https://hooks.example"), 4]]), byTenant: new Map([[a.tenantId, 4]]) };
    expect((await claim({ inFlight: busy })).map((c) => c.tenantId)).toEqual([b.tenantId]);
  });

  it("gives a tenant with many origins at most its share while another has due work, and every slot alone", async () => {
    const a = await seedNotifierTenant(tdb.db);
    const b = await seedNotifierTenant(tdb.db);
    const many = Array.from({ length: 40 }, (_, i) => `http://a${i}.example/hook`);
    await due(a.tenantId, many, 60_000);
    await due(b.tenantId, ["http://b.example/hook", "http://b.example/hook"], 10);

    // Round-robin, least loaded first: two free slots go one to each, though A's rows are all older.
    const two = await claim({ limit: 2 });
    expect([count(two, a.tenantId), count(two, b.tenantId)]).toEqual([1, 1]);

    await tdb.db.pool.query("UPDATE webhook_deliveries SET locked_until = NULL");
    const shared = await claim();
    expect(count(shared, a.tenantId)).toBe(16);
    expect(count(shared, b.tenantId)).toBe(2);

    // A holding its share while B has due work: nothing more for A.
    await tdb.db.pool.query("UPDATE webhook_deliveries SET locked_until = NULL");
    const held = await claim({ inFlight: { byOrigin: new Map(), byTenant: new Map([[a.tenantId, 16]]) } });
    expect(count(held, a.tenantId)).toBe(0);
    expect(count(held, b.tenantId)).toBe(2);

    // Alone, A takes every free slot.
    await tdb.db.pool.query("DELETE FROM webhook_deliveries WHERE tenant_id = $1", [b.tenantId]);
    await tdb.db.pool.query("UPDATE webhook_deliveries SET locked_until = NULL");
    expect(await claim()).toHaveLength(32);
  });

  it("walks at most walkLimit tenants, from the previous claim's last one and round to the first", async () => {
    const ts = (await Promise.all(Array.from({ length: 5 }, () => seedNotifierTenant(tdb.db)))).map((t) => t.tenantId).sort();
    for (const t of ts) await due(t, [`https://${t}.example/hook`]);
    const step = async (afterTenant: string, walkLimit: number) => {
      const r = await claimDueDeliveries(tdb.db, options({ afterTenant, walkLimit }));
      return { tenants: r.deliveries.map((d) => d.tenantId).sort(), walkedTo: r.walkedTo, truncated: r.truncated };
    };
    expect(await step("", 2)).toEqual({ tenants: [ts[0], ts[1]], walkedTo: ts[1], truncated: true });
    expect(await step(ts[1]!, 2)).toEqual({ tenants: [ts[2], ts[3]], walkedTo: ts[3], truncated: true });
    // Past the last tenant the walk goes round: ts[4], then ts[0] (whose row is claimed already).
    expect(await step(ts[3]!, 2)).toEqual({ tenants: [ts[4]], walkedTo: ts[0], truncated: true });
    await tdb.db.pool.query("UPDATE webhook_deliveries SET locked_until = NULL");
    expect(await step(ts[2]!, 10)).toEqual({ tenants: ts, walkedTo: ts[2], truncated: false });
    // Nothing PENDING: nothing walked.
    await tdb.db.pool.query("DELETE FROM webhook_deliveries");
    expect(await step(ts[2]!, 10)).toEqual({ tenants: [], walkedTo: "", truncated: false });
  });

  it("the delivery loop walks on at once while a window finds nothing and tenants are left, at most 8 windows in a row", async () => {
    const receiver = await startReceiver();
    const agent = createOutboundAgent(true, 5_000);
    const inFlight = new InFlight();
    const tick = createDeliveryTick({
      db: tdb.db, agent, log: createLogger("notifier", "silent"), metrics: createMetrics(() => inFlight.size), inFlight,
      allowPrivate: true, retrySchedule: [60], concurrency: 32, onSlotFreed: () => undefined, onRetryScheduled: () => undefined,
    }, 2);
    try {
      // Six tenants whose deliveries wait for a retry, then one (the last walked) with one due.
      for (let i = 0; i < 6; i++) await due((await seedNotifierTenant(tdb.db)).tenantId, ["https://waiting.example/h"], -60_000);
      const last = await seedNotifierTenant(tdb.db);
      await due(last.tenantId, [`${receiver.url}/due`]);
      expect([await tick(), await tick(), await tick()]).toEqual([true, true, true]);
      expect(await tick()).toBe(false);
      expect(inFlight.size + receiver.requests.length).toBe(1);
      await inFlight.drain(5_000);
      expect(receiver.requests.map((r) => r.path)).toEqual(["/due"]);
      // Nothing due among 20 waiting tenants: 7 more windows at once, then it waits for a poke or poll.
      for (let i = 0; i < 14; i++) await due((await seedNotifierTenant(tdb.db)).tenantId, ["https://waiting.example/h"], -60_000);
      const answers: boolean[] = [];
      for (let i = 0; i < 9; i++) answers.push(await tick());
      expect(answers).toEqual([true, true, true, true, true, true, true, false, true]);
    } finally {
      await inFlight.drain(5_000);
      await agent.close();
      await receiver.close();
    }
  });

  it("never hands one delivery to two claimers at once", async () => {
    const tenants = await Promise.all(Array.from({ length: 5 }, () => seedNotifierTenant(tdb.db)));
    for (const t of tenants) await due(t.tenantId, Array.from({ length: 40 }, (_, i) => `http://o${i % 10}.example/h${i}`));
    const rounds = await Promise.all(Array.from({ length: 6 }, () => claim({ limit: 50 })));
    const ids = rounds.flat().map((c) => c.id);
    expect(ids.length).toBeGreaterThan(0);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
