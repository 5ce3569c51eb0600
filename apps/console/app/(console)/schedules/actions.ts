"use server";

import { revalidatePath } from "next/cache";
import { redirect } from "next/navigation";
import { errorState, type ActionState } from "@/lib/action-state";
import type { ApiFailure } from "@/lib/graphql-error";
import { createSchedule, deleteSchedule, triggerSchedule, updateSchedule, type TaskTemplateInput } from "@/lib/api/schedules";
import { previewCron, type CronPreview } from "@/lib/cron-preview";
import { checked, int, text } from "@/lib/form-data";
import { requireSession } from "@/lib/session";

/** The API's input paths → this form's field names. */
const FIELDS = {
  name: "name",
  cron: "cron",
  timezone: "timezone",
  misfirePolicy: "misfirePolicy",
  overlapPolicy: "overlapPolicy",
  "task.type": "taskType",
  "task.queue": "taskQueue",
  "task.payload": "taskPayload",
  "task.priority": "taskPriority",
  "task.maxAttempts": "taskMaxAttempts",
  task: "taskType",
};

/**
 * Live preview for the cron field (called as the user types). It calls no API, so nothing else
 * asks for the session: a server action is a public POST endpoint, and without this anyone could
 * have the console compute previews.
 */
export async function previewCronAction(cron: string, timezone: string): Promise<CronPreview> {
  await requireSession();
  if (typeof cron !== "string" || typeof timezone !== "string" || cron.length > 200 || timezone.length > 100) {
    return { ok: false, error: "Too long to be a cron expression.", field: "cron" };
  }
  return previewCron(cron, timezone);
}

function template(form: FormData): { task: TaskTemplateInput } | { error: ActionState } {
  const payloadText = text(form, "taskPayload");
  let payload: unknown;
  if (payloadText !== undefined) {
    try {
      payload = JSON.parse(payloadText);
    } catch {
      return { error: { status: "error", message: "The payload is not valid JSON.", fieldErrors: { taskPayload: "Must be valid JSON, e.g. {\"report\": \"daily\"}" } } };
    }
  }
  return {
    task: {
      type: text(form, "taskType") ?? "",
      queue: text(form, "taskQueue") ?? null,
      ...(payloadText !== undefined ? { payload } : {}),
      priority: text(form, "taskPriority") ?? null,
      maxAttempts: int(form, "taskMaxAttempts") ?? null,
    },
  };
}

/** createSchedule's CONFLICT is its name being taken (the only one it has): said on the Name field, as the queue form does. */
function createRefused(error: ApiFailure): ActionState {
  const state = errorState(error, FIELDS);
  return error.code === "CONFLICT" ? { ...state, fieldErrors: { ...state.fieldErrors, name: error.message } } : state;
}

export async function saveScheduleAction(_state: ActionState, form: FormData): Promise<ActionState> {
  const id = text(form, "id");
  const fields = {
    cron: text(form, "cron") ?? "",
    timezone: text(form, "timezone") ?? "UTC",
    misfirePolicy: text(form, "misfirePolicy") ?? "SKIP",
    overlapPolicy: text(form, "overlapPolicy") ?? "ALLOW",
  };
  const replaceTask = id === undefined || checked(form, "replaceTask");
  const built = replaceTask ? template(form) : null;
  if (built && "error" in built) return built.error;
  if (id === undefined) {
    const result = await createSchedule({ ...fields, enabled: checked(form, "enabled"), name: text(form, "name") ?? "", task: built!.task });
    if (!result.ok) return createRefused(result.error);
    revalidatePath("/schedules");
    redirect(`/schedules/${result.data.id}?created=1`);
  }
  // No `enabled`: saving settings leaves it as it is (the Enable/Disable button owns it), so a form
  // loaded before a Disable cannot switch the schedule back on.
  const result = await updateSchedule(id, { ...fields, ...(built ? { task: built.task } : {}) });
  if (!result.ok) return errorState(result.error, FIELDS);
  revalidatePath(`/schedules/${id}`);
  revalidatePath("/schedules");
  return { status: "success", message: `Saved. The schedule is now at version ${result.data.version}.` };
}

export async function toggleScheduleAction(_state: ActionState, form: FormData): Promise<ActionState> {
  const id = text(form, "id");
  if (!id) return { status: "error", message: "No schedule given." };
  const enabled = text(form, "enabled") === "true";
  const result = await updateSchedule(id, { enabled });
  revalidatePath("/schedules");
  revalidatePath(`/schedules/${id}`);
  if (!result.ok) return errorState(result.error);
  return { status: "success", message: enabled ? "Enabled." : "Disabled." };
}

export async function triggerScheduleAction(_state: ActionState, form: FormData): Promise<ActionState> {
  const id = text(form, "id");
  if (!id) return { status: "error", message: "No schedule given." };
  const result = await triggerSchedule(id);
  revalidatePath(`/schedules/${id}`);
  if (!result.ok) return errorState(result.error);
  return { status: "success", message: "Triggered: a run was submitted now.", href: `/tasks/${result.data.id}` };
}

export async function deleteScheduleAction(_state: ActionState, form: FormData): Promise<ActionState> {
  const id = text(form, "id");
  if (!id) return { status: "error", message: "No schedule given." };
  const result = await deleteSchedule(id);
  if (!result.ok) return errorState(result.error);
  revalidatePath("/schedules");
  redirect("/schedules?deleted=1");
}
