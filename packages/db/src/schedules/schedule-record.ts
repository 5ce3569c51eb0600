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
  nextRunAt: Date | null;
  lastRunAt: Date | null;
  createdAt: Date;
}

export const SCHEDULE_COLUMNS = `id, tenant_id, name, cron, timezone, enabled, version, misfire_policy, overlap_policy,
  template, next_run_at, last_run_at, created_at`;

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
