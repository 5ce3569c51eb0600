import Link from "next/link";
import { TASK_STATUSES } from "@/lib/statuses";
import type { TaskFilterValues } from "@/lib/task-filters";
import { CreatedRangeFields } from "./CreatedRangeFields";

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
      <CreatedRangeFields range={values.range} from={values.from} to={values.to} />
      <div className="actions">
        <button type="submit" className="button button-primary">
          Apply
        </button>
        <Link className="button" href="/tasks">
          Reset
        </Link>
      </div>
      <p className="muted small filters-note" id="f-range-hint">
        A From or To date sets Created to “Between…”; another choice clears the dates.
      </p>
    </form>
  );
}
