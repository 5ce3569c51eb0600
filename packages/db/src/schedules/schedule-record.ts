import type { MisfirePolicy, OverlapPolicy, Priority, ResolvedBackoffPolicy } from "@tasklane/core";

/** The task every occurrence materialises (TaskTemplateInput with defaults resolved). */
export interface ScheduleTemplate {
  type: string;
  queue: string;
  payload: unknown;
  priority: Priority;
  maxAttempts: number;
  backoff: ResolvedBackoffPolicy;
  timeoutSeconds: number;
}

export interface ScheduleRecord {
  id: string;
  tenantId: string;
  name: string;
  cron: string;
  timezone: string;
  enabled: boolean;
  version: number;
  misfirePolicy: MisfirePolicy;
  overlapPolicy: OverlapPolicy;
  template: ScheduleTemplate;
  /** Stored: where the scheduler materialises next. Read for the API (SCHEDULE_VIEW_COLUMNS): the next occurrence not started yet. */
  nextRunAt: Date | null;
  /** Stored: the last occurrence that ran (materialised a run, not SKIPPED). Read for the API (SCHEDULE_VIEW_COLUMNS): the last one fired whose instant has passed. */
  lastRunAt: Date | null;
  createdAt: Date;
}

export const SCHEDULE_COLUMNS = `id, tenant_id, name, cron, timezone, enabled, version, misfire_policy, overlap_policy,
  template, next_run_at, last_run_at, created_at`;

/**
 * The schedule as the API shows it (mapScheduleRow reads it), from `schedules s`.
 * ALLOW runs are materialised ahead (FireOptions.lookaheadMs), which moves
 * next_run_at and last_run_at ahead of the runs themselves: while last_run_at
 * is in the future, nextRunAt is the earliest run still SCHEDULED ahead (else
 * next_run_at), and lastRunAt the latest fired occurrence whose instant has
 * passed. A run's instant is in its occurrence key (`<schedule id>:<ISO
 * instant>`), not its run_at, which a retry moves: read from run_at, lastRunAt
 * showed a retry's time. ISO instants of one format sort as text, so the
 * latest is one read of the occurrence keys' index; the next is one of the
 * (schedule_id, run_at) index (a SCHEDULED run has not been retried). Each is
 * made only then.
 */
export const SCHEDULE_VIEW_COLUMNS = `s.id, s.tenant_id, s.name, s.cron, s.timezone, s.enabled, s.version, s.misfire_policy, s.overlap_policy,
  s.template, s.created_at,
  CASE WHEN s.last_run_at > now() THEN COALESCE(
    (SELECT t.run_at FROM tasks t WHERE t.schedule_id = s.id AND t.run_at > now() AND t.status = 'SCHEDULED' AND t.occurrence_key IS NOT NULL
     ORDER BY t.run_at LIMIT 1),
    s.next_run_at) ELSE s.next_run_at END AS next_run_at,
  CASE WHEN s.last_run_at > now() THEN
    (SELECT substr(t.occurrence_key, length(s.id) + 2)::timestamptz FROM tasks t
     WHERE t.occurrence_key > s.id || ':'
       AND t.occurrence_key <= s.id || ':' || to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
       AND t.status <> 'SKIPPED'
     ORDER BY t.occurrence_key DESC LIMIT 1)
    ELSE s.last_run_at END AS last_run_at`;

export function mapScheduleRow(r: Record<string, unknown>): ScheduleRecord {
  return {
    id: r.id as string,
    tenantId: r.tenant_id as string,
    name: r.name as string,
    cron: r.cron as string,
    timezone: r.timezone as string,
    enabled: r.enabled as boolean,
    version: r.version as number,
    misfirePolicy: r.misfire_policy as MisfirePolicy,
    overlapPolicy: r.overlap_policy as OverlapPolicy,
    template: r.template as ScheduleTemplate,
    nextRunAt: (r.next_run_at as Date | null) ?? null,
    lastRunAt: (r.last_run_at as Date | null) ?? null,
    createdAt: r.created_at as Date,
  };
}
