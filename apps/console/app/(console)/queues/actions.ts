"use server";

import { revalidatePath } from "next/cache";
import { redirect } from "next/navigation";
import { errorState, type ActionState } from "@/lib/action-state";
import { setQueuePaused, upsertQueue } from "@/lib/api/queues";
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
  const perSecond = float(form, "ratePerSecond");
  const burst = int(form, "rateBurst");
  const result = await upsertQueue({
    name,
    mode,
    endpointUrl: mode === "PUSH" ? (text(form, "endpointUrl") ?? null) : null,
    concurrency: int(form, "concurrency") ?? null,
    rateLimit: perSecond === undefined ? null : { perSecond, burst: burst ?? null },
    paused: checked(form, "paused"),
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
