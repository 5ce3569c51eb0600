/**
 * A tenant's queues, addressed by name. Mode may switch PUSH ↔ PULL; the
 * endpoint is cleared when a queue becomes PULL.
 */
import { NotFoundError, QueueMode, defaultBurst, newId, type UpsertQueueInput } from "@tasklane/core";
import { withTenantScopePrisma, type Database, type Prisma } from "@tasklane/db";
import { assertOutboundUrl, type HostResolver } from "./outbound-url.js";
import type { PullQueueCache } from "./pull-queue-cache.js";

type QueueRow = Prisma.QueueModel;

export interface QueueStatsCounts {
  scheduled: number;
  queued: number;
  running: number;
  retrying: number;
  dead: number;
  succeeded: number;
  oldestQueuedAgeSeconds: number | null;
}

const EMPTY_STATS: QueueStatsCounts = {
  scheduled: 0,
  queued: 0,
  running: 0,
  retrying: 0,
  dead: 0,
  succeeded: 0,
  oldestQueuedAgeSeconds: null,
};

interface StatsRow {
  queue_id: string;
  status: string;
  n: number;
  oldest_age: number | null;
}

export class QueueService {
  constructor(
    private readonly db: Database,
    private readonly opts: { allowPrivateTargets: boolean; resolver?: HostResolver; pullQueues: PullQueueCache },
  ) {}

  async upsert(tenantId: string, input: UpsertQueueInput): Promise<QueueRow> {
    if (input.mode === QueueMode.PUSH && input.endpointUrl != null) {
      await assertOutboundUrl(input.endpointUrl, "endpointUrl", {
        allowPrivate: this.opts.allowPrivateTargets,
        ...(this.opts.resolver ? { resolver: this.opts.resolver } : {}),
      });
    }
    // The rate limit is stored whole: a burst left out defaults to one second's worth, never less than 1.
    const rateLimit =
      input.rateLimit == null
        ? {}
        : { rateLimitPerSecond: input.rateLimit.perSecond, rateLimitBurst: input.rateLimit.burst ?? defaultBurst(input.rateLimit.perSecond) };
    const changes = {
      mode: input.mode,
      // PULL never keeps an endpoint; PUSH always has one (the schema refuses PUSH without it).
      endpointUrl: input.mode === QueueMode.PUSH ? (input.endpointUrl ?? null) : null,
      ...(input.concurrency != null ? { concurrency: input.concurrency } : {}),
      ...(input.paused != null ? { paused: input.paused } : {}),
      ...rateLimit,
    };
    const row = await this.db.prisma.queue.upsert({
      where: { tenantId_name: { tenantId, name: input.name } },
      create: { id: newId("que"), tenantId, name: input.name, ...changes },
      update: changes,
    });
    this.opts.pullQueues.forget(tenantId, input.name);
    return row;
  }

  /** Reads run confined to the tenant by row-level security (defence in depth; packages/db tenant-scope.ts). */
  find(tenantId: string, name: string): Promise<QueueRow | null> {
    return withTenantScopePrisma(this.db.prisma, tenantId, (tx) => tx.queue.findUnique({ where: { tenantId_name: { tenantId, name } } }));
  }

  list(tenantId: string): Promise<QueueRow[]> {
    return withTenantScopePrisma(this.db.prisma, tenantId, (tx) => tx.queue.findMany({ where: { tenantId }, orderBy: { name: "asc" } }));
  }

  async setPaused(tenantId: string, name: string, paused: boolean): Promise<QueueRow> {
    const { count } = await this.db.prisma.queue.updateMany({ where: { tenantId, name }, data: { paused } });
    if (count === 0) throw new NotFoundError("Queue", name);
    const row = await this.find(tenantId, name);
    if (row === null) throw new NotFoundError("Queue", name);
    return row;
  }

  /** Counts per status for many queues in one GROUP BY (one query per request, not per queue). */
  async stats(queueIds: readonly string[]): Promise<Map<string, QueueStatsCounts>> {
    const result = new Map<string, QueueStatsCounts>(queueIds.map((id) => [id, { ...EMPTY_STATS }]));
    if (queueIds.length === 0) return result;
    const { rows } = await this.db.pool.query<StatsRow>(
      `SELECT queue_id, status::text AS status, count(*)::int AS n,
              extract(epoch FROM now() - min(run_at) FILTER (WHERE status = 'QUEUED' AND run_at <= now()))::float8 AS oldest_age
         FROM tasks
        WHERE queue_id = ANY($1::text[])
          AND status IN ('SCHEDULED', 'QUEUED', 'RUNNING', 'RETRYING', 'DEAD', 'SUCCEEDED')
        GROUP BY queue_id, status`,
      [queueIds],
    );
    for (const row of rows) {
      const stats = result.get(row.queue_id);
      if (stats === undefined) continue;
      applyCount(stats, row);
    }
    return result;
  }
}

function applyCount(stats: QueueStatsCounts, row: StatsRow): void {
  switch (row.status) {
    case "SCHEDULED":
      stats.scheduled = row.n;
      break;
    case "QUEUED":
      stats.queued = row.n;
      stats.oldestQueuedAgeSeconds = row.oldest_age === null ? null : Math.max(0, row.oldest_age);
      break;
    case "RUNNING":
      stats.running = row.n;
      break;
    case "RETRYING":
      stats.retrying = row.n;
      break;
    case "DEAD":
      stats.dead = row.n;
      break;
    case "SUCCEEDED":
      stats.succeeded = row.n;
      break;
    default:
      break;
  }
}
