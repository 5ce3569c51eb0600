/**
 * The task list's filters: what the URL says, what the list applies, and the
 * API filter they become. Shared by the page (server) and the filter form.
 */
import type { TaskFilterInput } from "./api/tasks";
import { TASK_STATUSES, type TaskStatus } from "./statuses";

export interface TaskFilterValues {
  status?: string | undefined;
  queue?: string | undefined;
  type?: string | undefined;
  range?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
  id?: string | undefined;
}

/** The "Created" choices; "custom" is the From/To pair. */
export const RANGES = [
  { value: "15m", label: "Last 15 minutes", ms: 15 * 60_000 },
  { value: "1h", label: "Last hour", ms: 60 * 60_000 },
  { value: "24h", label: "Last 24 hours", ms: 24 * 60 * 60_000 },
  { value: "7d", label: "Last 7 days", ms: 7 * 24 * 60 * 60_000 },
  { value: "custom", label: "Between…", ms: 0 },
] as const;

const DATETIME_LOCAL = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/;

/** "2026-11-29T10:00" (a datetime-local value, read as UTC) → ISO, or undefined. */
export function utc(local: string | undefined): string | undefined {
  if (!local || !DATETIME_LOCAL.test(local)) return undefined;
  const date = new Date(`${local}Z`);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

/**
 * The filters as the list applies them, so the form can show exactly that: a
 * From or To date means "Between…" (a date is never silently ignored), a
 * preset range ("Last hour") has no dates, and a date that is not one is dropped.
 */
export function effectiveValues(values: TaskFilterValues): TaskFilterValues {
  const from = utc(values.from) ? values.from : undefined;
  const to = utc(values.to) ? values.to : undefined;
  const preset = RANGES.find((r) => r.value === values.range && r.value !== "custom");
  if (preset) return { ...values, range: preset.value, from: undefined, to: undefined };
  if (values.range === "custom" || from || to) return { ...values, range: "custom", from, to };
  return { ...values, range: undefined, from: undefined, to: undefined };
}

/** Effective values (see effectiveValues) → the API's TaskFilter. */
export function toFilter(values: TaskFilterValues, now: number): TaskFilterInput {
  const filter: TaskFilterInput = {};
  if (values.status && (TASK_STATUSES as readonly string[]).includes(values.status)) filter.status = [values.status as TaskStatus];
  if (values.queue) filter.queue = values.queue;
  if (values.type) filter.type = values.type;
  const range = RANGES.find((r) => r.value === values.range);
  if (range && range.value !== "custom") filter.createdAfter = new Date(now - range.ms).toISOString();
  if (range?.value === "custom") {
    const after = utc(values.from);
    const before = utc(values.to);
    if (after) filter.createdAfter = after;
    if (before) filter.createdBefore = before;
  }
  return filter;
}
