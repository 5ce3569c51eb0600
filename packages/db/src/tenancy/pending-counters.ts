/**
 * Reads and upkeep of tenant_counters (pending tasks per tenant, kept by the
 * triggers of migration tenant_counters). A tenant's count is the sum of its
 * rows: one per database session that changed it, plus the folded base row.
 */
import { foldSessionRows, foldSessionRowsSql } from "../counters/session-counter-rows.js";
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

/** The platform backlog and the tenants holding at least `heavyAt` of it (one scan of tenant_counters). */
export async function platformBacklog(db: Queryable, heavyAt: number): Promise<{ pending: number; heavyTenants: string[] }> {
  const res = await db.query<{ pending: string; heavy: string[] }>(
    `SELECT coalesce(sum(p), 0)::text AS pending, coalesce(array_agg(tenant_id) FILTER (WHERE p >= $1), '{}') AS heavy
     FROM (SELECT tenant_id, sum(pending) AS p FROM tenant_counters GROUP BY tenant_id) per_tenant`,
    [heavyAt],
  );
  const row = res.rows[0];
  return { pending: Number(row?.pending ?? 0), heavyTenants: row?.heavy ?? [] };
}

const FOLD_TENANT_COUNTERS = foldSessionRowsSql({ table: "tenant_counters", key: ["tenant_id"], value: "pending" });

/** Folds per-session rows into each tenant's base row (see foldSessionRowsSql). */
export function foldPendingCounters(db: Queryable, limit = 10_000): Promise<number> {
  return foldSessionRows(db, FOLD_TENANT_COUNTERS, limit);
}
