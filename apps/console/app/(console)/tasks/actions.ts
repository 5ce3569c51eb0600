"use server";

import { revalidatePath } from "next/cache";
import { errorState, type ActionState } from "@/lib/action-state";
import { runBulkOperation, runTaskOperation, type TaskOperation } from "@/lib/api/tasks";
import { all, text } from "@/lib/form-data";

const OPERATIONS: Record<string, { op: TaskOperation; done: string }> = {
  cancel: { op: "cancelTask", done: "Task cancelled." },
  redrive: { op: "redriveTask", done: "Task redriven: it is queued again with a fresh attempt budget." },
  discard: { op: "discardTask", done: "Task discarded: it left the dead-letter queue." },
};

/** Cancel, redrive or discard one task (the task page's buttons). */
export async function taskAction(_state: ActionState, form: FormData): Promise<ActionState> {
  const id = text(form, "id");
  const chosen = OPERATIONS[text(form, "operation") ?? ""];
  if (!id || !chosen) return { status: "error", message: "Unknown operation." };
  const result = await runTaskOperation(chosen.op, id);
  revalidatePath(`/tasks/${id}`);
  if (!result.ok) return errorState(result.error);
  return { status: "success", message: chosen.done };
}

/** Redrive or discard the selected dead tasks (the dead-letter page). */
export async function bulkDeadLetterAction(_state: ActionState, form: FormData): Promise<ActionState> {
  const ids = [...new Set(all(form, "ids"))].slice(0, 500);
  const operation = text(form, "operation");
  if (ids.length === 0) return { status: "error", message: "Select at least one task first." };
  if (operation !== "redrive" && operation !== "discard") return { status: "error", message: "Unknown operation." };
  const outcome = await runBulkOperation(operation === "redrive" ? "redriveTask" : "discardTask", ids);
  revalidatePath("/dead-letters");
  const verb = operation === "redrive" ? "Redrove" : "Discarded";
  if (outcome.failed.length === 0) return { status: "success", message: `${verb} ${outcome.done.length} task${outcome.done.length === 1 ? "" : "s"}.` };
  const first = outcome.failed[0];
  return {
    status: "error",
    message: `${verb} ${outcome.done.length} of ${ids.length}; ${outcome.failed.length} refused${first ? ` (${first.id}: ${first.error.message})` : ""}.`,
  };
}
