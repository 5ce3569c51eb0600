/** The human forms of tasks: a table of many, the fields and attempts of one, a line of a watch or a tail. */
import { TaskStatus, type Task, type TaskEvent, type TaskWithAttempts } from "@tasklane/sdk";
import { count, json, printable, text, time } from "./format.js";
import { cell, formatFields, formatTable } from "./table.js";

export function formatTaskTable(tasks: readonly Task[], { lastError = false }: { lastError?: boolean } = {}): string {
  const headers = ["ID", "TYPE", "QUEUE", "STATUS", "PRIORITY", "ATTEMPTS", "CREATED", ...(lastError ? ["FINISHED", "LAST ERROR"] : [])];
  const rows = tasks.map((t) => [
    t.id,
    t.type,
    t.queue,
    t.status,
    t.priority,
    `${t.attempts}/${t.maxAttempts}`,
    time(t.createdAt),
    ...(lastError ? [time(t.completedAt), text(t.lastError)] : []),
  ]);
  return formatTable(headers, rows);
}

/** "50 of 1,234 tasks shown; --limit shows more", or "" when every one is shown. */
export function shownOf(shown: number, total: number, noun: string): string {
  return total > shown ? `${count(shown)} of ${count(total)} ${noun} shown; --limit shows more.\n` : "";
}

export function formatTaskDetail(task: TaskWithAttempts): string {
  const fields: [string, string][] = [
    ["id", task.id],
    ["type", task.type],
    ["queue", task.queue],
    ["status", task.cancelRequested && task.status === "RUNNING" ? "RUNNING (cancel requested)" : task.status],
    ["priority", task.priority],
    ["attempts", `${task.attempts} of ${task.maxAttempts}`],
    ["timeout", `${task.timeoutSeconds} s`],
    ["run at", time(task.runAt)],
    ["created", time(task.createdAt)],
    ["started", time(task.startedAt)],
    ["completed", time(task.completedAt)],
    ["idempotency key", text(task.idempotencyKey)],
    ["ordering key", text(task.orderingKey)],
    ["workflow", text(task.workflowId)],
    ["schedule", text(task.scheduleId)],
    ["payload", json(task.payload)],
    ["result", json(task.result)],
    ["last error", text(task.lastError)],
  ];
  const detail = formatFields(fields);
  if (task.attemptHistory.length === 0) return detail;
  const attempts = formatTable(
    ["#", "OUTCOME", "STARTED", "FINISHED", "WORKER", "ERROR"],
    task.attemptHistory.map((a) => [String(a.number), a.outcome ?? "RUNNING", time(a.startedAt), time(a.finishedAt), text(a.workerId), text(a.error)]),
  );
  return `${detail}\n${attempts}`;
}

/** One line of `tasks watch`: when it was seen, the status and the attempt, and how it ended. */
export function formatWatchLine(task: Task, seenAt: Date): string {
  const parts = [time(seenAt.toISOString()), task.status, `attempt ${task.attempts} of ${task.maxAttempts}`];
  if (task.cancelRequested && task.status === "RUNNING") parts.push("cancel requested");
  if (task.status === "SUCCEEDED") parts.push(`result ${json(task.result)}`);
  else if (task.lastError !== null && task.status !== "RUNNING") parts.push(`last error: ${task.lastError}`);
  return `${printable(parts.join("  "))}\n`;
}

/** The longest status name: a tail's status columns line up whatever the change. */
const STATUS_WIDTH = Math.max(...Object.values(TaskStatus).map((status) => status.length));

/**
 * One line of `tasks tail`: when the change happened, the event's id (what --after takes), the task,
 * the change, then the queue and the type. The type, the one field of any length, comes last so
 * the columns before it stay aligned from one line to the next.
 */
export function formatTailLine(event: TaskEvent): string {
  const change = `${(event.previousStatus ?? "-").padEnd(STATUS_WIDTH)} → ${event.status.padEnd(STATUS_WIDTH)}`;
  const [at, id, taskId, queue, type] = [time(event.at), event.id, event.taskId, event.task.queue, event.task.type].map(cell);
  return `${[at, id, taskId, change, queue, type].join("  ")}\n`;
}
