"use server";

import { revalidatePath } from "next/cache";
import { redirect } from "next/navigation";
import { errorState, type ActionState } from "@/lib/action-state";
import { rescheduleTask } from "@/lib/api/task-reschedule";
import { text } from "@/lib/form-data";
import type { RescheduledNotice } from "@/lib/task-operations";

/**
 * The task page's "Run now" (no runAt) and "Reschedule" (runAt, an ISO time the
 * form worked out from its date-time input, read as UTC like every console time).
 * A success goes back to the task page saying what was done (?rescheduled=):
 * a task run now may be RUNNING or finished by then, its buttons gone.
 */
export async function rescheduleAction(_state: ActionState, form: FormData): Promise<ActionState> {
  const id = text(form, "id");
  if (!id) return { status: "error", message: "Unknown task." };
  const runNow = text(form, "operation") === "runNow";
  const runAt = runNow ? null : (text(form, "runAt") ?? null);
  if (!runNow && runAt === null) return { status: "error", message: "Choose a date and time.", fieldErrors: { when: "Choose a date and time." } };
  const result = await rescheduleTask(id, runAt);
  revalidatePath(`/tasks/${id}`);
  if (!result.ok) return errorState(result.error, { runAt: "when", delaySeconds: "when" });
  const notice: RescheduledNotice = runNow ? "now" : "later";
  redirect(`/tasks/${encodeURIComponent(id)}?rescheduled=${notice}`);
}
