/**
 * Tenant quotas, charged inside the submitting transaction (submit-tasks.ts):
 *
 * - dailyTaskQuota: tenant_daily_usage (tenant, UTC day, slot 0) is incremented
 *   by the number of NEW tasks with a conditional upsert; the row lock
 *   serialises concurrent submissions, so the day's count never passes the
 *   quota. Tenants without a quota count in per-session rows (slot = backend
 *   pid), because one row per tenant and day made every submission of a tenant
 *   wait for the previous one's commit (npm run bench: 32 concurrent single
 *   submits were held to the commit rate of one row).
 * - maxPendingTasks: the tenant's pending count comes from tenant_counters
 *   (kept exact by triggers on tasks, migration tenant_counters), read after
 *   the insert. Counting task rows instead costs O(pending) per submit
 *   (measured on a vacuumed table: 3.6 ms at 10k, 51 ms at 100k, 306 ms at 1M
 *   pending; 0.5–2.5 s before vacuum). Submissions of a capped tenant are
 *   serialised by a transaction-scoped advisory lock taken by the queue lookup,
 *   i.e. before the insert, so the count read afterwards (a new snapshot)
 *   includes every submission admitted before this one: no overshoot.
 *   Uncapped tenants never take the lock.
 *
 * Tasks that come back to pending (retry, redrive, lease expiry) are never
 * refused: the caps govern admission of new work. Cron runs are new work and
 * count like submissions, but are never refused either: admitRuns tells the
 * scheduler how many fit, and the rest are recorded SKIPPED with the quota's
 * reason (an error would roll back every other schedule of its batch).
 */
import { NotFoundError, QuotaExceededError } from "@tasklane/core";
import type pg from "pg";

export interface TenantQuotas {
  maxPendingTasks: number | null;
  dailyTaskQuota: number | null;
}

export interface QueueLookup {
  queueIds: Map<string, string>;
  quotas: TenantQuotas;
}

/**
 * The tenant's queues by name and its quotas, in one statement. With `enforce`
 * and a pending cap, this statement also takes the tenant's submit lock
 * (released at commit or rollback).
 */
export async function lookupQueuesAndQuotas(client: pg.PoolClient, tenantId: string, queueNames: string[], enforce: boolean): Promise<QueueLookup> {
  const res = await client.query<{ id: string | null; name: string | null; max_pending_tasks: number | null; daily_task_quota: number | null }>(
    `SELECT q.id, q.name, t.max_pending_tasks, t.daily_task_quota,
            CASE WHEN $3 AND t.max_pending_tasks IS NOT NULL
                 THEN pg_advisory_xact_lock(hashtextextended('tasklane:pending-cap:' || t.id, 0)) IS NULL END AS locked
       FROM tenants t LEFT JOIN queues q ON q.tenant_id = t.id AND q.name = ANY($2::text[])
      WHERE t.id = $1`,
    [tenantId, queueNames, enforce],
  );
  const queueIds = new Map<string, string>();
  for (const row of res.rows) if (row.id !== null && row.name !== null) queueIds.set(row.name, row.id);
  for (const name of queueNames) {
    if (!queueIds.has(name)) throw new NotFoundError("Queue", name);
  }
  const first = res.rows[0];
  return { queueIds, quotas: { maxPendingTasks: first?.max_pending_tasks ?? null, dailyTaskQuota: first?.daily_task_quota ?? null } };
}

/** The day's submissions and the pending count, as the quotas are checked against them. */
export interface QuotaUsage {
  submittedToday: number;
  pending: number;
}

export type QuotaName = "dailyTaskQuota" | "maxPendingTasks";

/**
 * How many more tasks each quota admits on top of `usage` (negative: that
 * many too many; null: no such quota). One arithmetic for chargeQuotas (after
 * the insert: a negative room refuses) and admitRuns (before it).
 */
export function quotaRoom(quotas: TenantQuotas, usage: QuotaUsage): Record<QuotaName, number | null> {
  return {
    dailyTaskQuota: quotas.dailyTaskQuota === null ? null : quotas.dailyTaskQuota - usage.submittedToday,
    maxPendingTasks: quotas.maxPendingTasks === null ? null : quotas.maxPendingTasks - usage.pending,
  };
}

/** What a run held back by the quotas says in lastError: the quota with the least room left (the daily one on a tie). */
export function quotaSkipReason(quotas: TenantQuotas, room: Record<QuotaName, number | null>): string {
  const daily = room.dailyTaskQuota ?? Number.POSITIVE_INFINITY;
  const pending = room.maxPendingTasks ?? Number.POSITIVE_INFINITY;
  return daily <= pending
    ? `daily task quota of ${quotas.dailyTaskQuota} reached`
    : `pending task limit of ${quotas.maxPendingTasks} reached`;
}

/**
 * How many of `wanted` new runs the tenant's quotas admit now, and why the
 * rest are not (null when all are); called before the runs' insert, which
 * then counts those it creates in the day's usage (submit-tasks.ts). One
 * statement. Exact under concurrent submissions: it locks the day's usage row
 * (kept until commit; a submission's charge waits for it), and with a pending
 * cap the queue lookup before it took the tenant's submit lock.
 */
export async function admitRuns(
  client: pg.PoolClient,
  tenantId: string,
  wanted: number,
  quotas: TenantQuotas,
): Promise<{ admitted: number; reason: string | null }> {
  if (wanted === 0 || (quotas.dailyTaskQuota === null && quotas.maxPendingTasks === null)) return { admitted: wanted, reason: null };
  const res = await client.query<{ submitted: string | null; pending: string | null }>(
    `WITH day AS (
       -- Locks the row (created at 0 if absent) and answers it as committed: a no-op update.
       INSERT INTO tenant_daily_usage AS u (tenant_id, day, slot, submitted)
       SELECT $1, (now() AT TIME ZONE 'UTC')::date, 0, 0 WHERE $2::int IS NOT NULL
       ON CONFLICT (tenant_id, day, slot) DO UPDATE SET submitted = u.submitted
       RETURNING submitted
     )
     SELECT CASE WHEN $2::int IS NOT NULL THEN (SELECT submitted FROM day) + (SELECT coalesce(sum(o.submitted), 0) FROM tenant_daily_usage o
              WHERE o.tenant_id = $1 AND o.day = (now() AT TIME ZONE 'UTC')::date AND o.slot <> 0) END AS submitted,
            CASE WHEN $3::int IS NOT NULL THEN (SELECT coalesce(sum(pending), 0) FROM tenant_counters WHERE tenant_id = $1) END AS pending`,
    [tenantId, quotas.dailyTaskQuota, quotas.maxPendingTasks],
  );
  const row = res.rows[0];
  const room = quotaRoom(quotas, { submittedToday: Number(row?.submitted ?? 0), pending: Number(row?.pending ?? 0) });
  const admitted = Math.max(0, Math.min(wanted, room.dailyTaskQuota ?? wanted, room.maxPendingTasks ?? wanted));
  return { admitted, reason: admitted < wanted ? quotaSkipReason(quotas, room) : null };
}

/**
 * Counts `created` new tasks against the tenant's quotas, after their insert
 * and before commit; throws QUOTA_EXCEEDED (the caller's transaction then
 * rolls everything back). One statement whatever the quotas.
 */
export async function chargeQuotas(client: pg.PoolClient, tenantId: string, created: number, quotas: TenantQuotas): Promise<void> {
  if (created === 0) return;
  const daily = quotas.dailyTaskQuota;
  if (daily !== null && created > daily) throw dailyQuotaError(daily);
  const res = await client.query<{ submitted: number; pending: string | null }>(
    `WITH day AS (
       INSERT INTO tenant_daily_usage AS u (tenant_id, day, slot, submitted)
       VALUES ($1, (now() AT TIME ZONE 'UTC')::date, CASE WHEN $3::int IS NULL THEN pg_backend_pid() ELSE 0 END, $2)
       ON CONFLICT (tenant_id, day, slot) DO UPDATE SET submitted = u.submitted + EXCLUDED.submitted
       RETURNING submitted
     )
     SELECT (SELECT submitted FROM day)
              -- Rows other sessions wrote before the quota was set still count toward it.
              + CASE WHEN $3::int IS NOT NULL THEN (SELECT coalesce(sum(o.submitted), 0) FROM tenant_daily_usage o
                  WHERE o.tenant_id = $1 AND o.day = (now() AT TIME ZONE 'UTC')::date AND o.slot <> 0) ELSE 0 END AS submitted,
            CASE WHEN $4::int IS NOT NULL
                 THEN (SELECT coalesce(sum(pending), 0) FROM tenant_counters WHERE tenant_id = $1) END AS pending`,
    [tenantId, created, daily, quotas.maxPendingTasks],
  );
  const row = res.rows[0];
  const room = quotaRoom(quotas, { submittedToday: Number(row?.submitted ?? 0), pending: Number(row?.pending ?? 0) });
  // Over the quota: throwing rolls the increment back with the rest of the transaction.
  if (daily !== null && (room.dailyTaskQuota ?? 0) < 0) throw dailyQuotaError(daily);
  const cap = quotas.maxPendingTasks;
  if (cap !== null && (room.maxPendingTasks ?? 0) < 0) {
    throw new QuotaExceededError(`Pending task limit reached: at most ${cap} tasks may be SCHEDULED, QUEUED, RETRYING or BLOCKED`, {
      quota: "maxPendingTasks",
      limit: cap,
    });
  }
}

function dailyQuotaError(quota: number): QuotaExceededError {
  return new QuotaExceededError(`Daily task quota reached: at most ${quota} tasks per UTC day`, { quota: "dailyTaskQuota", limit: quota });
}
