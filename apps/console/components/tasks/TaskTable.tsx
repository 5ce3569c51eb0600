import Link from "next/link";
import type { TaskSummary } from "@/lib/api/types";
import { shortId } from "@/lib/format";
import { StatusBadge } from "../ui/StatusBadge";
import { Time } from "../ui/Time";

export function TaskTable({ tasks, caption }: { tasks: TaskSummary[]; caption: string }) {
  return (
    <div className="table-wrap">
      <table>
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Task</th>
            <th scope="col">Type</th>
            <th scope="col">Queue</th>
            <th scope="col">Status</th>
            <th scope="col" className="num">
              Attempts
            </th>
            <th scope="col">Created</th>
            <th scope="col" className="hide-sm">
              Finished
            </th>
          </tr>
        </thead>
        <tbody>
          {tasks.map((task) => (
            <tr key={task.id} data-task-id={task.id}>
              <td className="nowrap">
                <Link href={`/tasks/${task.id}`} className="mono" title={task.id}>
                  {shortId(task.id)}
                </Link>
              </td>
              <td className="truncate" title={task.type}>
                {task.type}
              </td>
              <td>{task.queue}</td>
              <td>
                <StatusBadge status={task.status} />
              </td>
              <td className="num">
                {task.attempts}/{task.maxAttempts}
              </td>
              <td className="nowrap">
                <Time iso={task.createdAt} relative />
              </td>
              <td className="nowrap hide-sm">
                <Time iso={task.completedAt} relative />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
