import {
  ConflictError,
  IdPrefix,
  MAX_SCHEDULES_PER_TENANT,
  NotFoundError,
  isWellFormedId,
  newId,
  nextOccurrence,
  occurrenceKey,
  occurrencesBetween,
  type MisfirePolicy,
  type OverlapPolicy,
} from "@tasklane/core";
import { isDeepStrictEqual } from "node:util";
import pg from "pg";
import { withTransaction, type Database } from "../database.js";
import type { DispatchIntent } from "../outbox/dispatch-intent.js";
import { pgRunner, reserveOwnedSlot } from "../tenancy/owned-caps.js";
import { skipPendingRuns } from "./cancel-runs.js";
import { materialiseDue, type MaterialiseOptions } from "./materialise-occurrences.js";
import { SCHEDULE_COLUMNS, SCHEDULE_VIEW_COLUMNS, mapScheduleRow, type ScheduleRecord, type ScheduleTemplate } from "./schedule-record.js";

export interface ScheduleDefinition {
  name: string;
  cron: string;
  timezone: string;
  template: ScheduleTemplate;
  misfirePolicy: MisfirePolicy;
  overlapPolicy: OverlapPolicy;
  enabled: boolean;
}

export type ScheduleChanges = Partial<Omit<ScheduleDefinition, "name">>;

const UNIQUE_VIOLATION = "23505";

/**
 * FOR KEY SHARE until the schedule commits, as a task insert's key check holds it: a deleteQueue holding
 * the queue's row lock is waited for (then the queue is gone: NOT_FOUND), and one coming later sees this
 * schedule and is refused. Unlocked, a schedule could be written naming a queue deleted a moment later.
 */
async function assertQueueExists(client: pg.PoolClient, tenantId: string, queue: string): Promise<void> {
  const res = await client.query("SELECT 1 FROM queues WHERE tenant_id = $1 AND name = $2 FOR KEY SHARE", [tenantId, queue]);
  if (!res.rowCount) throw new NotFoundError("Queue", queue);
}

/** next_run_at from the database's clock, the one clock every scheduler decides by. */
async function nextRunFromNow(client: pg.PoolClient, cron: string, timezone: string): Promise<Date | null> {
  const now = (await client.query<{ now: Date }>("SELECT now() AS now")).rows[0]!.now;
  return nextOccurrence(cron, timezone, now);
}

/** A new schedule; QUOTA_EXCEEDED past MAX_SCHEDULES_PER_TENANT live ones (owned-caps.ts), writing nothing. */
export async function createSchedule(db: Database, tenantId: string, def: ScheduleDefinition): Promise<ScheduleRecord> {
  return withTransaction(db.pool, async (client) => {
    await assertQueueExists(client, tenantId, def.template.queue);
    await reserveOwnedSlot(pgRunner(client), tenantId, "schedules");
    const next = def.enabled ? await nextRunFromNow(client, def.cron, def.timezone) : null;
    try {
      const res = await client.query(
        `INSERT INTO schedules (id, tenant_id, name, cron, timezone, enabled, misfire_policy, overlap_policy, template, next_run_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING ${SCHEDULE_COLUMNS}`,
        [newId(IdPrefix.schedule), tenantId, def.name, def.cron, def.timezone, def.enabled, def.misfirePolicy, def.overlapPolicy, JSON.stringify(def.template), next],
      );
      return mapScheduleRow(res.rows[0]);
    } catch (error) {
      if (error instanceof pg.DatabaseError && error.code === UNIQUE_VIOLATION) {
        throw new ConflictError(`A schedule named "${def.name}" already exists`);
      }
      throw error;
    }
  });
}

/**
 * Who changes a schedule (on its runs' events), the dispatch horizon for the
 * tasks the change releases, and how occurrences that fell due before the
 * change are materialised (MaterialiseOptions: misfire grace, run traces).
 */
export interface ScheduleEditor extends MaterialiseOptions {
  actor: string;
}

/** What a change or a delete did besides the schedule row. */
export interface ScheduleChangeEffects {
  /** Tasks to hand to Redis: runs it materialised, and tasks of an ordering key that skipped runs held back. */
  dispatch: DispatchIntent[];
  /** Runs it cancelled while RUNNING (a due occurrence of a CANCEL_RUNNING schedule): their executors must be told. */
  cancelledRunning: string[];
}

/** The schedule locked for a change, with the transaction's clock. */
async function lockSchedule(client: pg.PoolClient, tenantId: string, id: string): Promise<{ current: ScheduleRecord; now: Date }> {
  const res = await client.query(
    `SELECT ${SCHEDULE_COLUMNS}, now() AS db_now FROM schedules WHERE id = $1 AND tenant_id = $2 AND deleted_at IS NULL FOR UPDATE`,
    [id, tenantId],
  );
  if (!res.rows[0]) throw new NotFoundError("Schedule", id);
  return { current: mapScheduleRow(res.rows[0]), now: res.rows[0].db_now as Date };
}

type ScheduleSettings = Omit<ScheduleDefinition, "name">;

/** Stored JSON compares by content: key order and absent-vs-undefined do not make a change. */
const sameJson = (a: unknown, b: unknown) => isDeepStrictEqual(JSON.parse(JSON.stringify(a)), JSON.parse(JSON.stringify(b)));

function changesAnything(current: ScheduleRecord, merged: ScheduleSettings): boolean {
  return (
    merged.cron !== current.cron ||
    merged.timezone !== current.timezone ||
    merged.misfirePolicy !== current.misfirePolicy ||
    merged.overlapPolicy !== current.overlapPolicy ||
    merged.enabled !== current.enabled ||
    !sameJson(merged.template, current.template)
  );
}

/** More instants than a schedule ever has materialised ahead (2 s for ALLOW schedules in the scheduler). */
const MAX_AHEAD_CHECKED = 1000;

/**
 * Where a changed schedule's runs start: at its first occurrence after now
 * and after every instant that already has a run. Runs ahead of now outlive a
 * change only when a worker started them before it (a PUSH worker starts a
 * run up to WORKER_START_AHEAD_MS early): that occurrence is running under
 * the old version and must not run a second time under the new one. Such runs
 * were materialised by the scheduler, so their instants are at most
 * last_run_at; the instants are looked up by occurrence key (the unique index).
 * Call after skipPendingRuns, which releases the keys of the runs it skips.
 */
async function firstFreeOccurrence(
  client: pg.PoolClient,
  s: Pick<ScheduleRecord, "id" | "cron" | "timezone" | "lastRunAt">,
  now: Date,
): Promise<Date | null> {
  const ahead = s.lastRunAt && s.lastRunAt > now ? occurrencesBetween(s.cron, s.timezone, now, s.lastRunAt, MAX_AHEAD_CHECKED) : [];
  let after = now;
  if (ahead.length > 0) {
    const res = await client.query<{ occurrence_key: string }>(`SELECT occurrence_key FROM tasks WHERE occurrence_key = ANY($1::text[])`, [
      ahead.map((at) => occurrenceKey(s.id, at)),
    ]);
    const taken = new Set(res.rows.map((r) => r.occurrence_key));
    after = ahead.filter((at) => taken.has(occurrenceKey(s.id, at))).at(-1) ?? now;
  }
  return nextOccurrence(s.cron, s.timezone, after);
}

/**
 * The latest occurrence of schedule `s` that has a run not SKIPPED, at or
 * before its last_run_at (null when none). Runs materialised ahead that a
 * change SKIPs (skipPendingRuns) were the latest that ran, so last_run_at
 * goes back to this: it named them, and once their instants passed lastRunAt
 * showed an occurrence that never ran (QA: an every-5-seconds schedule disabled at
 * 07:12:29 read lastRunAt 07:12:30, that run SKIPPED "schedule disabled").
 * The runs above the one found are the few skipped ahead, and ones a quota
 * or the overlap policy SKIPPED in between (as schedule-record.ts's view
 * walks them).
 */
const LATEST_RUN_UP_TO_LAST_RUN_AT = `SELECT substr(t.occurrence_key, length(s.id) + 2)::timestamptz FROM tasks t
  WHERE t.occurrence_key > s.id || ':'
    AND t.occurrence_key <= s.id || ':' || to_char(s.last_run_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
    AND t.status <> 'SKIPPED'
  ORDER BY t.occurrence_key DESC LIMIT 1`;

/**
 * Every change makes a new version. Before it, in the same transaction and
 * under the row lock the scheduler also takes, the occurrences already due
 * are materialised under the old version (misfire and overlap policies as the
 * scheduler applies them): a change never loses an occurrence the scheduler
 * had not reached yet. Runs materialised ahead under the old version and not
 * yet due are SKIPPED, and the scheduler materialises the new version's from
 * next_run_at (firstFreeOccurrence; disabling clears it, which stops new runs
 * at once). An update
 * that changes nothing is no change: no version, next_run_at untouched.
 */
export async function updateSchedule(
  db: Database,
  tenantId: string,
  id: string,
  changes: ScheduleChanges,
  editor: ScheduleEditor,
): Promise<{ schedule: ScheduleRecord } & ScheduleChangeEffects> {
  if (!isWellFormedId(IdPrefix.schedule, id)) throw new NotFoundError("Schedule", id);
  return withTransaction(db.pool, async (client) => {
    const { current, now } = await lockSchedule(client, tenantId, id);
    const merged: ScheduleSettings = {
      cron: changes.cron ?? current.cron,
      timezone: changes.timezone ?? current.timezone,
      template: changes.template ?? current.template,
      misfirePolicy: changes.misfirePolicy ?? current.misfirePolicy,
      overlapPolicy: changes.overlapPolicy ?? current.overlapPolicy,
      enabled: changes.enabled ?? current.enabled,
    };
    if (!changesAnything(current, merged)) return { schedule: await viewSchedule(client, id), dispatch: [], cancelledRunning: [] };
    if (changes.template) await assertQueueExists(client, tenantId, merged.template.queue);
    const due = await materialiseDue(client, current, now, editor);
    const version = current.version + 1;
    const reason = merged.enabled ? `schedule changed (version ${version})` : "schedule disabled";
    const skipped = await skipPendingRuns(client, id, editor.actor, reason, editor.horizonMs);
    const next = merged.enabled ? await firstFreeOccurrence(client, { ...current, ...merged }, now) : null;
    await client.query(
      `UPDATE schedules s SET cron = $3, timezone = $4, template = $5, misfire_policy = $6, overlap_policy = $7, enabled = $8,
         next_run_at = $9, version = $10, updated_at = now(),
         last_run_at = CASE WHEN $11 THEN (${LATEST_RUN_UP_TO_LAST_RUN_AT}) ELSE s.last_run_at END
       WHERE s.id = $1 AND s.tenant_id = $2`,
      [id, tenantId, merged.cron, merged.timezone, JSON.stringify(merged.template), merged.misfirePolicy, merged.overlapPolicy, merged.enabled, next, version, skipped.skipped.length > 0],
    );
    return { schedule: await viewSchedule(client, id), dispatch: [...due.dispatch, ...skipped.dispatch], cancelledRunning: due.cancelledRunning };
  });
}

/**
 * Soft delete: occurrences already due are materialised first (as for a
 * change), then no new runs (those materialised ahead are SKIPPED), the name
 * is free again, past runs stay queryable.
 */
export async function deleteSchedule(db: Database, tenantId: string, id: string, editor: ScheduleEditor): Promise<ScheduleChangeEffects> {
  if (!isWellFormedId(IdPrefix.schedule, id)) throw new NotFoundError("Schedule", id);
  return withTransaction(db.pool, async (client) => {
    const { current, now } = await lockSchedule(client, tenantId, id);
    const due = await materialiseDue(client, current, now, editor);
    await client.query(`UPDATE schedules SET deleted_at = now(), enabled = false, next_run_at = NULL, updated_at = now() WHERE id = $1`, [id]);
    const skipped = await skipPendingRuns(client, id, editor.actor, "schedule deleted", editor.horizonMs);
    return { dispatch: [...due.dispatch, ...skipped.dispatch], cancelledRunning: due.cancelledRunning };
  });
}

/** A schedule just written, as the API shows it (SCHEDULE_VIEW_COLUMNS), read in the writing transaction. */
async function viewSchedule(client: pg.PoolClient, id: string): Promise<ScheduleRecord> {
  const res = await client.query(`SELECT ${SCHEDULE_VIEW_COLUMNS} FROM schedules s WHERE s.id = $1`, [id]);
  return mapScheduleRow(res.rows[0]);
}

export async function getSchedule(db: Database, tenantId: string, id: string): Promise<ScheduleRecord | null> {
  if (!isWellFormedId(IdPrefix.schedule, id)) return null;
  const res = await db.pool.query(`SELECT ${SCHEDULE_VIEW_COLUMNS} FROM schedules s WHERE s.id = $1 AND s.tenant_id = $2 AND s.deleted_at IS NULL`, [id, tenantId]);
  return res.rows[0] ? mapScheduleRow(res.rows[0]) : null;
}

/**
 * Every live schedule of the tenant, by name. The contract's `schedules` has no
 * paging, so the whole list is the cap on live schedules (owned-caps.ts): it
 * used to stop at 500, and a tenant's 501st to 1,000th schedules, by name,
 * could not be listed at all.
 */
export async function listSchedules(db: Database, tenantId: string, limit = MAX_SCHEDULES_PER_TENANT): Promise<ScheduleRecord[]> {
  const res = await db.pool.query(
    `SELECT ${SCHEDULE_VIEW_COLUMNS} FROM schedules s WHERE s.tenant_id = $1 AND s.deleted_at IS NULL ORDER BY s.name LIMIT $2`,
    [tenantId, limit],
  );
  return res.rows.map(mapScheduleRow);
}
