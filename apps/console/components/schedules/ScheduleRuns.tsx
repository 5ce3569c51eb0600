import Link from "next/link";
import type { TaskSummary } from "@/lib/api/types";
import { shortId } from "@/lib/format";
import { EmptyState } from "../ui/EmptyState";
import { StatusBadge } from "../ui/StatusBadge";
import { Time } from "../ui/Time";

/** Materialised runs, newest scheduled time first. */
export function ScheduleRuns({ runs }: { runs: TaskSummary[] }) {
  if (runs.length === 0) {
    return <EmptyState title="No runs yet" icon="◷">The first run appears here when its time comes, or when you trigger it.</EmptyState>;
  }
  return (
    <div className="table-wrap">
      <table>
        <caption className="visually-hidden">Run history, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Run</th>
            <th scope="col">Scheduled for</th>
            <th scope="col">Status</th>
            <th scope="col" className="num">
              Attempts
            </th>
            <th scope="col">Finished</th>
          </tr>
        </thead>
        <tbody>
          {runs.map((run) => (
            <tr key={run.id}>
              <td>
                <Link href={`/tasks/${run.id}`} className="mono" title={run.id}>
                  {shortId(run.id)}
                </Link>
              </td>
              <td className="nowrap">
                <Time iso={run.runAt} />
              </td>
              <td>
                <StatusBadge status={run.status} />
              </td>
              <td className="num">
                {run.attempts}/{run.maxAttempts}
              </td>
              <td className="nowrap">
                <Time iso={run.completedAt} relative />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
