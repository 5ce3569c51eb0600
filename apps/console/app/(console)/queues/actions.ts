"use server";

import { revalidatePath } from "next/cache";
import { redirect } from "next/navigation";
import { errorState, type ActionState } from "@/lib/action-state";
import { deleteQueue, getQueue, purgeQueue, setQueuePaused, upsertQueue } from "@/lib/api/queues";
import { checked, float, int, text } from "@/lib/form-data";

const FIELDS = {
  name: "name",
  mode: "mode",
  endpointUrl: "endpointUrl",
  concurrency: "concurrency",
  "rateLimit.perSecond": "ratePerSecond",
  "rateLimit.burst": "rateBurst",
  rateLimit: "ratePerSecond",
};

export async function saveQueueAction(_state: ActionState, form: FormData): Promise<ActionState> {
  const editing = text(form, "editing") === "1";
  const name = text(form, "name") ?? "";
  const mode = text(form, "mode") === "PUSH" ? "PUSH" : "PULL";
  const concurrency = int(form, "concurrency");
  const perSecond = float(form, "ratePerSecond");
  const burst = int(form, "rateBurst");
  if (!editing) {
    // upsertQueue updates a queue of that name in place: "New queue" must not quietly become an edit.
    // (Two people creating the same name in the same instant can still race; the later one wins.)
    const existing = await getQueue(name);
    if (!existing.ok) return errorState(existing.error, FIELDS);
    if (existing.data !== null) {
      const message = `A queue named ${name} already exists. Choose another name, or open ${name} to change its settings.`;
      return { status: "error", message, fieldErrors: { name: `A queue named ${name} already exists.` } };
    }
  }
  const result = await upsertQueue({
    name,
    mode,
    endpointUrl: mode === "PUSH" ? (text(form, "endpointUrl") ?? null) : null,
    concurrency: concurrency ?? null,
    rateLimit: perSecond === undefined ? null : { perSecond, burst: burst ?? null },
    // A blank limit means none, as the form says; null alone would leave the current one in place.
    removeLimits: [...(concurrency === undefined ? (["CONCURRENCY"] as const) : []), ...(perSecond === undefined ? (["RATE_LIMIT"] as const) : [])],
    // Editing leaves the pause alone (null: unchanged): the Pause/Resume button owns it, and a form
    // loaded before a pause must not undo it. Creating may start the queue paused.
    paused: editing ? null : checked(form, "paused"),
  });
  if (!result.ok) return errorState(result.error, FIELDS);
  revalidatePath("/queues");
  revalidatePath("/");
  if (!editing) redirect(`/queues?created=${encodeURIComponent(result.data.name)}`);
  return { status: "success", message: "Queue saved." };
}

export async function pauseQueueAction(_state: ActionState, form: FormData): Promise<ActionState> {
  const name = text(form, "name");
  if (!name) return { status: "error", message: "No queue given." };
  const pause = text(form, "pause") === "true";
  const result = await setQueuePaused(name, pause);
  revalidatePath("/queues");
  revalidatePath(`/queues/${encodeURIComponent(name)}`);
  if (!result.ok) return errorState(result.error);
  return { status: "success", message: pause ? "Paused." : "Resumed." };
}

export async function purgeQueueAction(_state: ActionState, form: FormData): Promise<ActionState> {
  const name = text(form, "name");
  if (!name) return { status: "error", message: "No queue given." };
  const result = await purgeQueue(name);
  revalidatePath("/queues");
  revalidatePath(`/queues/${encodeURIComponent(name)}`);
  revalidatePath("/");
  if (!result.ok) return errorState(result.error);
  const running = result.data.stats.running;
  return { status: "success", message: `Purged: nothing is waiting in ${name}${running > 0 ? `; ${running} running task${running === 1 ? "" : "s"} will finish` : ""}.` };
}

export async function deleteQueueAction(_state: ActionState, form: FormData): Promise<ActionState> {
  const name = text(form, "name");
  if (!name) return { status: "error", message: "No queue given." };
  const result = await deleteQueue(name);
  if (!result.ok) return errorState(result.error);
  revalidatePath("/queues");
  revalidatePath("/");
  redirect(`/queues?deleted=${encodeURIComponent(name)}`);
}
