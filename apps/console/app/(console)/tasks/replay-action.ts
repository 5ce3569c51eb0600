"use server";

import { redirect } from "next/navigation";
import { errorState, type ActionState } from "@/lib/action-state";
import { replayTask } from "@/lib/api/task-replay";
import { text } from "@/lib/form-data";

/**
 * The task page's "Replay": runs the finished task again as a new task and
 * goes to the new task's page, which links back to this one ("Replay of").
 * Not repeated on a lost answer: a second call would make a second task.
 */
export async function replayTaskAction(_state: ActionState, form: FormData): Promise<ActionState> {
  const id = text(form, "id");
  if (!id) return { status: "error", message: "Unknown task." };
  const result = await replayTask(id);
  if (!result.ok) return errorState(result.error);
  redirect(`/tasks/${encodeURIComponent(result.data.id)}`);
}
