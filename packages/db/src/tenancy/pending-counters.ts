/**
 * Reads and upkeep of tenant_counters (pending tasks per tenant, kept by the
 * triggers of migration tenant_counters). A tenant's count is the sum of its
 * rows: one per database session that changed it, plus the folded base row.
 */
import type { Queryable } from "../database.js";

/** Pending (SCHEDULED + QUEUED + RETRYING + BLOCKED) tasks of each tenant, exact; absent tenants count 0. */
export async function pendingTaskCounts(db: Queryable, tenantIds: readonly string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>(tenantIds.map((id) => [id, 0]));
  if (tenantIds.length === 0) return out;
  const res = await db.query<{ tenant_id: string; pending: string }>(
    "SELECT tenant_id, sum(pending)::text AS pending FROM tenant_counters WHERE tenant_id = ANY($1::text[]) GROUP BY tenant_id",
    [tenantIds],
  );
  for (const row of res.rows) out.set(row.tenant_id, Number(row.pending));
  return out;
}

/** Pending tasks across all tenants (the platform backlog). */
export async function totalPendingTasks(db: Queryable): Promise<number> {
  const res = await db.query<{ pending: string }>("SELECT coalesce(sum(pending), 0)::text AS pending FROM tenant_counters");
  return Number(res.rows[0]?.pending ?? 0);
}

/**
 * Folds per-session rows into each tenant's base row (slot 0), so the table
 * stays about tenants × active sessions as connections come and go. Rows a
 * running transaction holds are skipped (SKIP LOCKED): nobody waits, and a
 * session whose row was folded simply starts a new one. Base rows are written
 * in tenant order, so concurrent folds cannot deadlock. Sums are unchanged.
 */
export async function foldPendingCounters(db: Queryable, limit = 10_000): Promise<number> {
  const res = await db.query<{ n: number }>(
    `WITH picked AS (
       SELECT tenant_id, slot FROM tenant_counters WHERE slot <> 0
       ORDER BY tenant_id, slot LIMIT $1 FOR UPDATE SKIP LOCKED
     ),
     gone AS (
       DELETE FROM tenant_counters c USING picked p
       WHERE c.tenant_id = p.tenant_id AND c.slot = p.slot
       RETURNING c.tenant_id, c.pending
     ),
     base AS (
       INSERT INTO tenant_counters AS b (tenant_id, slot, pending)
       SELECT tenant_id, 0, sum(pending) FROM gone GROUP BY tenant_id ORDER BY tenant_id
       ON CONFLICT (tenant_id, slot) DO UPDATE SET pending = b.pending + EXCLUDED.pending
       RETURNING 1
     )
     SELECT (SELECT count(*) FROM gone)::int AS n, (SELECT count(*) FROM base) AS _`,
    [limit],
  );
  return res.rows[0]?.n ?? 0;
}
