/**
 * Row-level security as defence in depth (migration tenant_rls): runs `fn` in
 * a transaction as the role tasklane_app with app.tenant_id set, so every
 * query inside sees and writes only that tenant's rows, whatever its WHERE
 * clause says. Both settings are LOCAL: they end with the transaction and
 * never leak to the next user of the pooled connection.
 *
 * For tenant-scoped request paths only; the platform's cross-tenant work
 * (scheduler, worker fleet, notifier) keeps the connection's own role.
 */
import type pg from "pg";
import { withTransaction } from "../database.js";
import type { Prisma, PrismaClient } from "../generated/prisma/client.js";

/** The application role tenant-scoped queries run as. */
export const TENANT_ROLE = "tasklane_app";

export function withTenantScope<T>(pool: pg.Pool, tenantId: string, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  return withTransaction(pool, async (client) => {
    await client.query("SELECT set_config('role', $1, true), set_config('app.tenant_id', $2, true)", [TENANT_ROLE, tenantId]);
    return fn(client);
  });
}

/** The same through Prisma (one interactive transaction), for reads that map whole models. */
export function withTenantScopePrisma<T>(prisma: PrismaClient, tenantId: string, fn: (tx: Prisma.TransactionClient) => Promise<T>): Promise<T> {
  return prisma.$transaction(async (tx) => {
    await tx.$queryRaw`SELECT set_config('role', ${TENANT_ROLE}, true), set_config('app.tenant_id', ${tenantId}, true)`;
    return fn(tx);
  });
}
