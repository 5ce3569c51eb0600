import Link from "next/link";
import type { WorkflowNode } from "@/lib/api/types";
import { StatusBadge } from "../ui/StatusBadge";

/** The graph as a table: the same facts for keyboard and screen-reader users. */
export function WorkflowTaskTable({ nodes }: { nodes: WorkflowNode[] }) {
  return (
    <div className="table-wrap">
      <table>
        <caption className="visually-hidden">Workflow tasks in submission order</caption>
        <thead>
          <tr>
            <th scope="col">Key</th>
            <th scope="col">Type</th>
            <th scope="col">Depends on</th>
            <th scope="col">Status</th>
            <th scope="col">Last error</th>
          </tr>
        </thead>
        <tbody>
          {nodes.map((n) => (
            <tr key={n.key}>
              <td>
                <Link href={`/tasks/${n.task.id}`}>{n.key}</Link>
              </td>
              <td>{n.task.type}</td>
              <td>{n.dependsOn.length ? n.dependsOn.join(", ") : <span className="muted">—</span>}</td>
              <td>
                <StatusBadge status={n.task.status} />
              </td>
              <td className="truncate" title={n.task.lastError ?? undefined}>
                {n.task.lastError ?? "—"}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
