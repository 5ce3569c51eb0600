/**
 * Caps on how many queues, schedules, webhook endpoints and API keys a tenant
 * owns (limits.ts: MAX_QUEUES_PER_TENANT, MAX_SCHEDULES_PER_TENANT,
 * MAX_WEBHOOKS_PER_TENANT, MAX_API_KEYS_PER_TENANT), checked by the create that would pass one, in the
 * transaction that writes it: refused, it writes nothing.
 *
 * Race-safe: a tenant's creates of one kind are serialised by a
 * transaction-scoped advisory lock (the device submit-quotas.ts uses for the
 * pending cap), taken in a statement of its own before the count. Under READ
 * COMMITTED each statement reads a new snapshot, so the count sees every
 * create committed by an earlier holder of the lock: twenty concurrent creates
 * with five slots left create exactly five. (Taken inside the counting
 * statement, the lock would come after that statement's snapshot and miss the
 * previous holder's row.) Updates and deletes never take it. The count reads
 * at most the cap's worth of index entries (~1,000), and only creates pay it.
 */
import { MAX_API_KEYS_PER_TENANT, MAX_QUEUES_PER_TENANT, MAX_SCHEDULES_PER_TENANT, MAX_WEBHOOKS_PER_TENANT, QuotaExceededError } from "@tasklane/core";
import type pg from "pg";
import type { Prisma } from "../generated/prisma/client.js";

export type OwnedKind = "queues" | "schedules" | "webhooks" | "apiKeys";

interface OwnedCap {
  cap: number;
  /** Live rows of the kind: a deleted queue's row is gone (deleteQueue); schedules and webhooks are deleted softly. */
  count: string;
  /** QuotaExceededError's extensions.quota. */
  quota: string;
  /** What the refusal's message calls them, when not the kind's own name. */
  noun?: string;
}

const CAPS: Record<OwnedKind, OwnedCap> = {
  queues: { cap: MAX_QUEUES_PER_TENANT, count: "SELECT count(*)::int AS live FROM queues WHERE tenant_id = $1", quota: "queuesPerTenant" },
  schedules: {
    cap: MAX_SCHEDULES_PER_TENANT,
    count: "SELECT count(*)::int AS live FROM schedules WHERE tenant_id = $1 AND deleted_at IS NULL",
    quota: "schedulesPerTenant",
  },
  webhooks: {
    cap: MAX_WEBHOOKS_PER_TENANT,
    count: "SELECT count(*)::int AS live FROM webhooks WHERE tenant_id = $1 AND deleted_at IS NULL",
    quota: "webhooksPerTenant",
  },
  // Keys with an expiry are console session keys (createApiKey makes none),
  // outside the cap so a tenant at it can still sign in (MAX_API_KEYS_PER_TENANT).
  apiKeys: {
    cap: MAX_API_KEYS_PER_TENANT,
    count: "SELECT count(*)::int AS live FROM api_keys WHERE tenant_id = $1 AND revoked_at IS NULL AND expires_at IS NULL",
    quota: "apiKeysPerTenant",
    noun: "API keys",
  },
};

/** Raw SQL inside the caller's transaction, whether it holds a pg client or a Prisma transaction. */
export interface SqlRunner {
  rows<R>(sql: string, params: unknown[]): Promise<R[]>;
}

export function pgRunner(client: pg.PoolClient): SqlRunner {
  return { rows: async <R>(sql: string, params: unknown[]) => (await client.query(sql, params)).rows as R[] };
}

export function prismaRunner(tx: Prisma.TransactionClient): SqlRunner {
  return { rows: <R>(sql: string, params: unknown[]) => tx.$queryRawUnsafe<R[]>(sql, ...params) };
}

/**
 * Takes the tenant's create lock for `kind` until the transaction ends. Every
 * later statement of the transaction sees what earlier holders committed.
 */
export async function lockOwnedCreates(run: SqlRunner, tenantId: string, kind: OwnedKind): Promise<void> {
  // IS NULL: a void column is not something every client maps.
  await run.rows(`SELECT pg_advisory_xact_lock(hashtextextended('tasklane:owned-cap:' || $2::text || ':' || $1::text, 0)) IS NULL AS locked`, [tenantId, kind]);
}

/**
 * QUOTA_EXCEEDED when the tenant already has the cap's worth of `kind`. Call
 * holding lockOwnedCreates (an earlier statement of the same transaction).
 */
export async function assertRoomFor(run: SqlRunner, tenantId: string, kind: OwnedKind): Promise<void> {
  const { cap, count, quota, noun = kind } = CAPS[kind];
  const [row] = await run.rows<{ live: number }>(count, [tenantId]);
  if (Number(row?.live ?? 0) >= cap) throw new QuotaExceededError(`A tenant may have at most ${cap} ${noun}`, { quota, limit: cap });
}

/** lockOwnedCreates then assertRoomFor: what a create does first in its transaction. */
export async function reserveOwnedSlot(run: SqlRunner, tenantId: string, kind: OwnedKind): Promise<void> {
  await lockOwnedCreates(run, tenantId, kind);
  await assertRoomFor(run, tenantId, kind);
}
