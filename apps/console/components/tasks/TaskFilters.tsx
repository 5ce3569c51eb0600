import Link from "next/link";
import { TASK_STATUSES } from "@/lib/statuses";

export interface TaskFilterValues {
  status?: string;
  queue?: string;
  type?: string;
  range?: string;
  from?: string;
  to?: string;
  id?: string;
}

export const RANGES = [
  { value: "15m", label: "Last 15 minutes", ms: 15 * 60_000 },
  { value: "1h", label: "Last hour", ms: 60 * 60_000 },
  { value: "24h", label: "Last 24 hours", ms: 24 * 60 * 60_000 },
  { value: "7d", label: "Last 7 days", ms: 7 * 24 * 60 * 60_000 },
  { value: "custom", label: "Between…", ms: 0 },
] as const;

/**
 * The list's filters as a plain GET form: the URL is the state, so a filtered
 * view can be bookmarked and shared, and it works with the keyboard alone.
 */
export function TaskFilters({ values, queues }: { values: TaskFilterValues; queues: string[] }) {
  return (
    <form method="get" action="/tasks" className="card filters" role="search" aria-label="Filter tasks">
      <div className="field">
        <label htmlFor="f-id">Task id</label>
        <input id="f-id" name="id" type="search" placeholder="task_…" defaultValue={values.id} spellCheck={false} autoComplete="off" />
      </div>
      <div className="field">
        <label htmlFor="f-status">Status</label>
        <select id="f-status" name="status" defaultValue={values.status ?? ""}>
          <option value="">Any status</option>
          {TASK_STATUSES.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor="f-queue">Queue</label>
        <select id="f-queue" name="queue" defaultValue={values.queue ?? ""}>
          <option value="">Any queue</option>
          {queues.map((q) => (
            <option key={q} value={q}>
              {q}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor="f-type">Type</label>
        <input id="f-type" name="type" type="text" placeholder="exact type" defaultValue={values.type} autoComplete="off" />
      </div>
      <div className="field">
        <label htmlFor="f-range">Created</label>
        <select id="f-range" name="range" defaultValue={values.range ?? ""}>
          <option value="">Any time</option>
          {RANGES.map((r) => (
            <option key={r.value} value={r.value}>
              {r.label}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor="f-from">From (UTC)</label>
        <input id="f-from" name="from" type="datetime-local" step={1} defaultValue={values.from} aria-describedby="f-range-hint" />
      </div>
      <div className="field">
        <label htmlFor="f-to">To (UTC)</label>
        <input id="f-to" name="to" type="datetime-local" step={1} defaultValue={values.to} aria-describedby="f-range-hint" />
        <span className="visually-hidden" id="f-range-hint">
          Used when Created is set to Between.
        </span>
      </div>
      <div className="actions">
        <button type="submit" className="button button-primary">
          Apply
        </button>
        <Link className="button" href="/tasks">
          Reset
        </Link>
      </div>
    </form>
  );
}
