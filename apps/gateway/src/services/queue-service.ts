/**
 * A tenant's queues, addressed by name. Mode may switch PUSH ↔ PULL; the
 * endpoint is cleared when a queue becomes PULL.
 */
import { BadUserInputError, NotFoundError, QueueLimit, QueueMode, defaultBurst, newId, type TaskStatus, type UpsertQueueInput } from "@tasklane/core";
import {
  assertRoomFor,
  deleteQueue,
  lockOwnedCreates,
  oldestQueuedAges,
  prismaRunner,
  purgeQueue,
  queueStatusCounts,
  withTenantScopePrisma,
  type Database,
  type DispatchIntent,
  type Prisma,
  type QueueStatusCount,
} from "@tasklane/db";
import { FastPathTimeout, withinFastPathWait } from "@tasklane/queue";
import type { DeletedQueueJobs } from "./deleted-queue-jobs.js";
import { assertOutboundUrl, type HostResolver } from "./outbound-url.js";
import type { PullQueueCache } from "./pull-queue-cache.js";
import { redispatchQueue, type RedispatchDeps } from "./queue-redispatch.js";

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

type BeforeUpsert = { mode: string; paused: boolean; endpointUrl: string | null };

/**
 * Omitted means "leave as it is" (contract): an existing PUSH queue keeps its endpoint. A new PUSH
 * queue, or one switching to PUSH, has none to keep and could never run anything without one.
 */
const keptEndpoint = (before: BeforeUpsert | null): string | null => (before?.mode === QueueMode.PUSH ? before.endpointUrl : null);

function endpointNeeded(input: UpsertQueueInput, before: BeforeUpsert | null): void {
  if (input.mode === QueueMode.PUSH && input.endpointUrl == null && keptEndpoint(before) == null) {
    const message = before === null ? "is required to create a PUSH queue" : "is required to switch a queue to PUSH";
    throw new BadUserInputError(`endpointUrl ${message}`, [{ path: "endpointUrl", message }]);
  }
}

function upsertChanges(input: UpsertQueueInput, before: BeforeUpsert | null) {
  const removed = new Set(input.removeLimits ?? []);
  // The rate limit is stored whole: a burst left out defaults to one second's worth, never less than 1.
  const rateLimit = removed.has(QueueLimit.RATE_LIMIT)
    ? { rateLimitPerSecond: null, rateLimitBurst: null }
    : input.rateLimit == null
      ? {}
      : { rateLimitPerSecond: input.rateLimit.perSecond, rateLimitBurst: input.rateLimit.burst ?? defaultBurst(input.rateLimit.perSecond) };
  return {
    mode: input.mode,
    // PULL never keeps an endpoint; PUSH always has one (given, or kept: checked by endpointNeeded).
    endpointUrl: input.mode === QueueMode.PUSH ? (input.endpointUrl ?? keptEndpoint(before)) : null,
    ...(removed.has(QueueLimit.CONCURRENCY) ? { concurrency: null } : input.concurrency != null ? { concurrency: input.concurrency } : {}),
    ...(input.paused != null ? { paused: input.paused } : {}),
    ...rateLimit,
  };
}

/**
 * A PULL queue's tasks are marked handed over when written (they never need
 * Redis), so once it switches to PUSH, horizon promotion skipped those due
 * beyond the dispatch horizon and only the reconciler's sweep added them,
 * once within it: QA saw tasks due 9, 12 and 15 s ahead start 9.9, 6.8 and
 * 3.8 s late (up to RECONCILE_INTERVAL_SECONDS idle, a whole sweep pass
 * behind a deep backlog). The switch hands the soonest of them back to
 * promotion, which takes them on time; past FAR_TASKS_IN_SWITCH (so the
 * mutation stays short) the rest are still the sweep's.
 *
 * The soonest are chosen unlocked, then locked in id order, the order every
 * transition that waits for task locks takes them (a PUSH start,
 * startAttemptsByIds; cancelWorkflow; purgeQueue). Locked in run_at order, as
 * they were, a switch holding a sooner task with a smaller-id one still to
 * lock deadlocked against a start holding the smaller id and waiting for the
 * sooner one: Postgres aborted one of them after deadlock_timeout
 * (queue-mode-switch.test.ts). The lock's own look re-checks each row, so a
 * task that changed after it was chosen is left alone.
 */
const HAND_FAR_TASKS_TO_PROMOTION = `
  UPDATE tasks t SET dispatch_generation = t.dispatch_generation + 1
  FROM (SELECT l.id FROM tasks l
        WHERE l.id = ANY(ARRAY(
                SELECT s.id FROM tasks s
                WHERE s.tenant_id = $1 AND s.queue_id = $2 AND s.status IN ('SCHEDULED', 'RETRYING')
                  AND s.run_at > now() + $3::float8 * interval '1 millisecond' AND s.enqueued_generation = s.dispatch_generation
                ORDER BY s.run_at LIMIT $4))
          AND l.queue_id = $2 AND l.status IN ('SCHEDULED', 'RETRYING') AND l.enqueued_generation = l.dispatch_generation
          AND l.run_at > now() + $3::float8 * interval '1 millisecond'
        ORDER BY l.id FOR UPDATE OF l) far
  -- = ANY(ARRAY[...]): one primary-key probe per locked row, never a hash join over the table (db sql-fragments.ts sameId).
  WHERE t.id = ANY(ARRAY[far.id])`;
const FAR_TASKS_IN_SWITCH = 10_000;
/** DISPATCH_HORIZON_SECONDS' default, for a service built without redispatch (tests). */
const DEFAULT_HORIZON_MS = 300_000;

export class QueueService {
  constructor(
    private readonly db: Database,
    private readonly opts: {
      allowPrivateTargets: boolean;
      resolver?: HostResolver;
      pullQueues: PullQueueCache;
      /** Puts a PUSH queue's waiting tasks back in Redis when it starts to run (queue-redispatch.ts). */
      redispatch?: Omit<RedispatchDeps, "db"> & {
        onError(error: unknown, queueId: string): void;
        /** The background walk of a backlog deeper than the request's pages ended. */
        onBackgroundDone?(queueId: string, outcome: { added: number; checked: number; complete: boolean }): void;
      };
      /** What purgeQueue and deleteQueue need beyond Postgres. */
      lifecycle?: {
        /** Post-commit dispatch of tasks a purge made startable (ordering keys' next tasks); the outbox delivers them otherwise. */
        dispatch(intents: DispatchIntent[]): Promise<void>;
        /** Clears a deleted queue out of Redis. */
        jobs: DeletedQueueJobs;
        onError(error: unknown, queueId: string, what: string): void;
      };
    },
  ) {}

  /** Background walks running, by queue: one at a time per queue. */
  private readonly walking = new Map<string, Promise<void>>();

  async upsert(tenantId: string, input: UpsertQueueInput): Promise<QueueRow> {
    // Checked on an unlocked read first: the endpoint's DNS lookup must not hold the queue's row lock.
    const seen = await this.db.prisma.queue.findUnique({
      where: { tenantId_name: { tenantId, name: input.name } },
      select: { mode: true, paused: true, endpointUrl: true },
    });
    endpointNeeded(input, seen);
    if (input.mode === QueueMode.PUSH && input.endpointUrl != null) {
      await assertOutboundUrl(input.endpointUrl, "endpointUrl", {
        allowPrivate: this.opts.allowPrivateTargets,
        ...(this.opts.resolver ? { resolver: this.opts.resolver } : {}),
      });
    }
    // The row as the write finds it, locked: read apart from the write, a pause committed in between
    // (read running, written over) was a resume that put nothing back in Redis. FOR NO KEY UPDATE, not
    // FOR UPDATE: a switch to PUSH goes on to wait for task locks (HAND_FAR_TASKS_TO_PROMOTION), and a
    // transition holding one may need the queue's key (KEY SHARE: its counter trigger's first row for the
    // queue on its connection, a task insert), which FOR UPDATE refused: 'deadlock detected'.
    const { before, row } = await this.db.prisma.$transaction(async (tx) => {
      // A create is capped (MAX_QUEUES_PER_TENANT, owned-caps.ts): its lock is taken before the read below, so
      // a create of the same name that committed while this one waited is read here, and this becomes its update.
      const creating = seen === null;
      if (creating) await lockOwnedCreates(prismaRunner(tx), tenantId, "queues");
      const locked = await tx.$queryRaw<BeforeUpsert[]>`
        SELECT mode::text AS mode, paused, endpoint_url AS "endpointUrl" FROM queues WHERE tenant_id = ${tenantId} AND name = ${input.name} FOR NO KEY UPDATE`;
      const before = locked[0] ?? null;
      if (before === null) {
        // A queue seen above and deleted since (deleteQueue) is created again: the create's lock and cap apply.
        if (!creating) await lockOwnedCreates(prismaRunner(tx), tenantId, "queues");
        await assertRoomFor(prismaRunner(tx), tenantId, "queues");
      }
      endpointNeeded(input, before);
      const changes = upsertChanges(input, before);
      const row = await tx.queue.upsert({
        where: { tenantId_name: { tenantId, name: input.name } },
        create: { id: newId("que"), tenantId, name: input.name, ...changes },
        update: changes,
      });
      const horizonMs = this.opts.redispatch?.horizonMs;
      if (before?.mode === QueueMode.PULL && row.mode === QueueMode.PUSH && horizonMs !== undefined) {
        await tx.$executeRawUnsafe(HAND_FAR_TASKS_TO_PROMOTION, tenantId, row.id, horizonMs, FAR_TASKS_IN_SWITCH);
      }
      return { before, row };
    });
    this.opts.pullQueues.forget(tenantId, input.name);
    // A PULL queue's tasks have no jobs and a paused one's may have lost theirs: without this they
    // waited for the reconciler's sweep. (PUSH -> PULL needs nothing: leases read Postgres, and jobs
    // left in Redis are skipped by workers, whose directory holds PUSH queues only.)
    if (before !== null && (before.mode === QueueMode.PULL || before.paused)) await this.startedRunning(row);
    return row;
  }

  /** The queue may run now: when it is a running PUSH queue, its waiting tasks go (back) to Redis before the caller is answered. */
  private async startedRunning(row: QueueRow): Promise<void> {
    const redispatch = this.opts.redispatch;
    if (redispatch === undefined || row.mode !== QueueMode.PUSH || row.paused) return;
    // The first pages are back before the caller's next submissions, so those queue behind the waiting
    // work as their priority says; the rest follows in the background. On failure the reconciler's
    // sweep still re-adds them: the change itself is committed and stands. The answer waits for the
    // first pages at most FAST_PATH_WAIT_MS (with Redis down, not until it is back); past that they go
    // on alone, as does the walk of the rest they start, and what they miss is the reconciler's.
    let rest: Awaited<ReturnType<typeof redispatchQueue>>["rest"] = null;
    const first = redispatchQueue({ ...redispatch, db: this.db }, row.tenantId, row.id);
    try {
      ({ rest } = await withinFastPathWait(first, "the resumed queue's tasks", "the reconciler re-adds them"));
    } catch (error: unknown) {
      redispatch.onError(error, row.id);
      if (error instanceof FastPathTimeout) first.then((late) => late.rest?.catch((e: unknown) => redispatch.onError(e, row.id)), () => undefined);
      return;
    }
    // A walk already running for this queue covers the rest (what it passed is the reconciler's).
    if (rest === null || this.walking.has(row.id)) {
      void rest?.catch((error: unknown) => redispatch.onError(error, row.id));
      return;
    }
    const walk = rest
      .then((outcome) => redispatch.onBackgroundDone?.(row.id, outcome))
      .catch((error: unknown) => redispatch.onError(error, row.id))
      .finally(() => this.walking.delete(row.id));
    this.walking.set(row.id, walk);
  }

  /** Until the background walks started so far have ended (tests, shutdown). */
  async settled(): Promise<void> {
    await Promise.all([...this.walking.values()]);
  }

  /**
   * purgeQueue: cancels the queue's waiting tasks (QUEUED, SCHEDULED, RETRYING) and its BLOCKED workflow
   * tasks, a batch per transaction, leaving RUNNING ones alone (packages/db purge-queue.ts). Answers the
   * queue as it is afterwards.
   */
  async purge(tenantId: string, name: string, actor: string): Promise<QueueRow> {
    const queue = await this.find(tenantId, name);
    if (queue === null) throw new NotFoundError("Queue", name);
    const lifecycle = this.opts.lifecycle;
    await purgeQueue(this.db, tenantId, queue.id, {
      actor,
      horizonMs: this.opts.redispatch?.horizonMs ?? DEFAULT_HORIZON_MS,
      ...(lifecycle ? { onBatch: (b) => lifecycle.dispatch(b.dispatch) } : {}),
    });
    return (await this.find(tenantId, name)) ?? queue;
  }

  /**
   * deleteQueue: refused (CONFLICT) while anything could still run in it or a schedule targets it; else
   * deletes it with its finished tasks (packages/db delete-queue.ts) and clears it out of Redis.
   * The default queue is refused at the edge (input-schemas.ts).
   */
  async delete(tenantId: string, name: string): Promise<boolean> {
    const queue = await this.find(tenantId, name);
    if (queue === null) throw new NotFoundError("Queue", name);
    const deleted = await deleteQueue(this.db, tenantId, { id: queue.id, name: queue.name });
    if (deleted === null) throw new NotFoundError("Queue", name);
    this.opts.pullQueues.forget(tenantId, name);
    const lifecycle = this.opts.lifecycle;
    // Best effort: the queue is gone either way; what stays in Redis only costs workers a look now and then.
    await lifecycle?.jobs.clear(tenantId, queue.id).catch((error: unknown) => lifecycle.onError(error, queue.id, "clear the deleted queue out of Redis"));
    return true;
  }

  /** Reads run confined to the tenant by row-level security (defence in depth; packages/db tenant-scope.ts). */
  find(tenantId: string, name: string): Promise<QueueRow | null> {
    return withTenantScopePrisma(this.db.prisma, tenantId, (tx) => tx.queue.findUnique({ where: { tenantId_name: { tenantId, name } } }));
  }

  list(tenantId: string): Promise<QueueRow[]> {
    return withTenantScopePrisma(this.db.prisma, tenantId, (tx) => tx.queue.findMany({ where: { tenantId }, orderBy: { name: "asc" } }));
  }

  async setPaused(tenantId: string, name: string, paused: boolean): Promise<QueueRow> {
    // Only a queue that was paused is redispatched on resume, told by the statement that writes it (the old
    // row, locked): read apart from the write, a pause committed in between made a resume put nothing back.
    const res = await this.db.pool.query<{ was_paused: boolean }>(
      `WITH old AS (SELECT id, paused FROM queues WHERE tenant_id = $1 AND name = $2 FOR UPDATE)
       UPDATE queues q SET paused = $3, updated_at = now() FROM old WHERE q.id = old.id
       RETURNING old.paused AS was_paused`,
      [tenantId, name, paused],
    );
    const updated = res.rows[0];
    if (updated === undefined) throw new NotFoundError("Queue", name);
    const row = await this.find(tenantId, name);
    if (row === null) throw new NotFoundError("Queue", name);
    if (!paused && updated.was_paused) await this.startedRunning(row);
    return row;
  }

  /** Counts per status for many queues from their counters, and each one's oldest wait (two statements per request, not per queue). */
  async stats(queueIds: readonly string[]): Promise<Map<string, QueueStatsCounts>> {
    const result = new Map<string, QueueStatsCounts>(queueIds.map((id) => [id, { ...EMPTY_STATS }]));
    if (queueIds.length === 0) return result;
    const [counts, ages] = await Promise.all([queueStatusCounts(this.db.pool, queueIds), oldestQueuedAges(this.db.pool, queueIds)]);
    for (const count of counts) {
      const stats = result.get(count.queueId);
      if (stats !== undefined) applyCount(stats, count);
    }
    for (const [queueId, age] of ages) {
      const stats = result.get(queueId);
      if (stats !== undefined) stats.oldestQueuedAgeSeconds = age;
    }
    return result;
  }
}

/** Where each counted status goes in QueueStats; the others (BLOCKED, CANCELLED, SKIPPED) are not shown. */
const STATS_FIELD: Partial<Record<TaskStatus, Exclude<keyof QueueStatsCounts, "oldestQueuedAgeSeconds">>> = {
  SCHEDULED: "scheduled",
  QUEUED: "queued",
  RUNNING: "running",
  RETRYING: "retrying",
  DEAD: "dead",
  SUCCEEDED: "succeeded",
};

function applyCount(stats: QueueStatsCounts, count: QueueStatusCount): void {
  const field = STATS_FIELD[count.status];
  if (field !== undefined) stats[field] = count.tasks;
}
