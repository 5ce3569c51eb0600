import Link from "next/link";
import type { TaskDetail } from "@/lib/api/types";
import { Time } from "../ui/Time";

export function TaskMeta({ task }: { task: TaskDetail }) {
  const rows: { label: string; value: React.ReactNode }[] = [
    { label: "Type", value: task.type },
    { label: "Queue", value: <Link href={`/tasks?queue=${encodeURIComponent(task.queue)}`}>{task.queue}</Link> },
    { label: "Priority", value: task.priority },
    { label: "Attempts", value: `${task.attempts} of ${task.maxAttempts}` },
    { label: "Created", value: <Time iso={task.createdAt} /> },
    { label: "Run at", value: <Time iso={task.runAt} /> },
    { label: "Started", value: <Time iso={task.startedAt} /> },
    { label: "Completed", value: <Time iso={task.completedAt} /> },
    { label: "Idempotency key", value: task.idempotencyKey ?? "—" },
    { label: "Ordering key", value: task.orderingKey ?? "—" },
    { label: "Workflow", value: task.workflowId ? <Link href={`/workflows/${task.workflowId}`}>{task.workflowId}</Link> : "—" },
    { label: "Schedule", value: task.scheduleId ? <Link href={`/schedules/${task.scheduleId}`}>{task.scheduleId}</Link> : "—" },
  ];
  return (
    <dl className="meta">
      {rows.map((row) => (
        <div key={row.label}>
          <dt>{row.label}</dt>
          <dd>{row.value}</dd>
        </div>
      ))}
    </dl>
  );
}
