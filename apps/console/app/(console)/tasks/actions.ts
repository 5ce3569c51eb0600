"use server";

import { revalidatePath } from "next/cache";
import { redirect } from "next/navigation";
import { describeFailure, errorState, type ActionState } from "@/lib/action-state";
import { runDeadLetterBatch, type DeadLetterBatch } from "@/lib/api/dead-letters";
import { runBulkOperation, runTaskOperation, type TaskOperation } from "@/lib/api/tasks";
import { isTaskOperationName, type TaskOperationName } from "@/lib/task-operations";
import { all, text } from "@/lib/form-data";

const OPERATIONS: Record<TaskOperationName, TaskOperation> = { cancel: "cancelTask", redrive: "redriveTask", discard: "discardTask" };

/**
 * Cancel, redrive or discard one task (the task page's buttons). A success goes back to the task
 * page saying what was done (?done=): the button that asked is gone once the status has changed,
 * and with it any message it could show.
 */
export async function taskAction(_state: ActionState, form: FormData): Promise<ActionState> {
  const id = text(form, "id");
  const name = text(form, "operation");
  if (!id || !isTaskOperationName(name)) return { status: "error", message: "Unknown operation." };
  const result = await runTaskOperation(OPERATIONS[name], id);
  revalidatePath(`/tasks/${id}`);
  if (!result.ok) return errorState(result.error);
  redirect(`/tasks/${encodeURIComponent(id)}?done=${name}`);
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

/** The most one "Redrive all" / "Discard all" step takes: the page calls again for the next. */
const DEAD_LETTER_STEP = 1_000;

export type DeadLetterStep = ({ ok: true } & DeadLetterBatch) | { ok: false; message: string };

/**
 * One step of the dead-letter page's "Redrive all" / "Discard all": up to `max` (at most 1,000) of
 * the dead tasks of `queue` (null: every queue), the one that died first first. The page calls it
 * again while it answers hasMore, showing the progress between calls, and refreshes at the end.
 */
export async function deadLetterStepAction(operation: unknown, queue: unknown, max: unknown): Promise<DeadLetterStep> {
  if (operation !== "redrive" && operation !== "discard") return { ok: false, message: "Unknown operation." };
  if (queue !== null && (typeof queue !== "string" || queue === "")) return { ok: false, message: "Unknown queue." };
  if (typeof max !== "number" || !Number.isInteger(max) || max < 1) return { ok: false, message: "Nothing to do." };
  const result = await runDeadLetterBatch(operation, queue, Math.min(max, DEAD_LETTER_STEP));
  if (!result.ok) return { ok: false, message: describeFailure(result.error) };
  return { ok: true, ...result.data };
}
