/**
 * Tenants: creation (operator), limits, usage and the signing secret.
 */
import {
  DEFAULT_QUEUE_NAME,
  NotFoundError,
  QueueMode,
  SIGNING_SECRET_ROTATIONS_CHANNEL,
  TaskStatus,
  TenantLimit,
  generateSigningSecret,
  hashSecret,
  newApiKeySecret,
  newId,
  type CreateTenantInput,
  type TenantLimitsInput,
} from "@tasklane/core";
import { Prisma, type Database } from "@tasklane/db";

type TenantRow = Prisma.TenantModel;
import { ApiKeyScope } from "../auth/scopes.js";

/** How long the previous signing secret keeps verifying after a rotation (contract: 24 h). */
const PREVIOUS_SECRET_GRACE_MS = 24 * 60 * 60 * 1000;

export interface CreatedTenant {
  tenant: TenantRow;
  apiKey: string;
  signingSecret: string;
}

export interface TenantUsageCounts {
  pendingTasks: number;
  runningTasks: number;
  submittedToday: number;
}

/** Only the limits the caller gave; `undefined` leaves the column to its default or current value. */
/** Null and omitted leave a column as it is (undefined to Prisma); a removed limit is written as null: none. */
function limitColumns(limits: TenantLimitsInput | null | undefined) {
  const removed = new Set(limits?.removeLimits ?? []);
  const removable = (limit: TenantLimit, value: number | null | undefined) => (removed.has(limit) ? null : (value ?? undefined));
  return {
    weight: limits?.weight ?? undefined,
    maxConcurrency: removable(TenantLimit.MAX_CONCURRENCY, limits?.maxConcurrency),
    apiRatePerSecond: limits?.apiRatePerSecond ?? undefined,
    apiBurst: limits?.apiBurst ?? undefined,
    maxPendingTasks: removable(TenantLimit.MAX_PENDING_TASKS, limits?.maxPendingTasks),
    dailyTaskQuota: removable(TenantLimit.DAILY_TASK_QUOTA, limits?.dailyTaskQuota),
  };
}

export class TenantService {
  constructor(private readonly db: Database) {}

  /** Tenant, first API key ("full") and the "default" PULL queue in one nested write (one transaction). */
  async create(input: CreateTenantInput): Promise<CreatedTenant> {
    const key = newApiKeySecret();
    const signingSecret = generateSigningSecret();
    const tenant = await this.db.prisma.tenant.create({
      data: {
        id: newId("ten"),
        name: input.name,
        ...limitColumns(input.limits),
        signingSecret,
        apiKeys: {
          create: { id: newId("key"), name: "default", prefix: key.prefix, secretHash: hashSecret(key.secret), scopes: [ApiKeyScope.full] },
        },
        queues: { create: { id: newId("que"), name: DEFAULT_QUEUE_NAME, mode: QueueMode.PULL } },
      },
    });
    return { tenant, apiKey: key.secret, signingSecret };
  }

  async updateLimits(id: string, limits: TenantLimitsInput): Promise<TenantRow> {
    try {
      return await this.db.prisma.tenant.update({ where: { id }, data: limitColumns(limits) });
    } catch (error: unknown) {
      // P2025: no row matched the where clause.
      if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === "P2025") throw new NotFoundError("Tenant", id);
      throw error;
    }
  }

  async get(id: string): Promise<TenantRow> {
    const tenant = await this.db.prisma.tenant.findUnique({ where: { id } });
    // Reachable only if the tenant was deleted after its key was cached.
    if (tenant === null) throw new NotFoundError("Tenant", id);
    return tenant;
  }

  /**
   * Exact, and cheap whatever the backlog: pending comes from tenant_counters
   * (kept by triggers on tasks), running is the small set of tasks leased now,
   * submittedToday sums the rows the submit path increments.
   */
  async usage(tenantId: string): Promise<TenantUsageCounts> {
    const { rows } = await this.db.pool.query<{ pending: number; running: number; submitted_today: number }>(
      `SELECT (SELECT coalesce(sum(pending), 0) FROM tenant_counters WHERE tenant_id = $1)::int AS pending,
              (SELECT count(*) FROM tasks WHERE tenant_id = $1 AND status = $2::"TaskStatus")::int AS running,
              (SELECT coalesce(sum(submitted), 0) FROM tenant_daily_usage
                WHERE tenant_id = $1 AND day = (now() AT TIME ZONE 'UTC')::date)::int AS submitted_today`,
      [tenantId, TaskStatus.RUNNING],
    );
    const row = rows[0];
    return { pendingTasks: row?.pending ?? 0, runningTasks: row?.running ?? 0, submittedToday: row?.submitted_today ?? 0 };
  }

  /**
   * The old secret keeps verifying for 24 h so receivers can roll over without dropping requests.
   * The NOTIFY goes out at commit, before this returns: workers reload the tenant's secrets on it
   * (queue-directory.ts), so a PUSH request sent after the answer is signed with the new secret too.
   */
  async rotateSigningSecret(tenantId: string): Promise<string> {
    const next = generateSigningSecret();
    const { rowCount } = await this.db.pool.query(
      `WITH rotated AS (
         UPDATE tenants
            SET previous_signing_secret = signing_secret,
                previous_secret_expires_at = now() + make_interval(secs => $3),
                signing_secret = $2,
                updated_at = now()
          WHERE id = $1
         RETURNING id)
       SELECT pg_notify($4, id) FROM rotated`,
      [tenantId, next, PREVIOUS_SECRET_GRACE_MS / 1000, SIGNING_SECRET_ROTATIONS_CHANNEL],
    );
    if (rowCount !== 1) throw new NotFoundError("Tenant", tenantId);
    return next;
  }
}
