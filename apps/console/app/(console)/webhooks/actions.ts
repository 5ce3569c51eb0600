"use server";

import { revalidatePath } from "next/cache";
import { errorState, type ActionState } from "@/lib/action-state";
import { createWebhook, deleteWebhook, rotateWebhookSecret, setWebhookEnabled } from "@/lib/api/webhooks";
import { all, text } from "@/lib/form-data";

/** Answers the endpoint's signing secret once, in the action's state; it is not kept anywhere else. */
export async function createWebhookAction(_state: ActionState, form: FormData): Promise<ActionState> {
  const url = text(form, "url") ?? "";
  const events = all(form, "events");
  if (events.length === 0) return { status: "error", message: "Choose at least one event.", fieldErrors: { events: "Choose at least one event." } };
  const result = await createWebhook(url, events.includes("*") ? ["*"] : events);
  if (!result.ok) return errorState(result.error, { url: "url", events: "events" });
  revalidatePath("/webhooks");
  return { status: "success", message: `Endpoint added: ${result.data.webhook.url}`, secret: result.data.secret };
}

export async function toggleWebhookAction(_state: ActionState, form: FormData): Promise<ActionState> {
  const id = text(form, "id");
  if (!id) return { status: "error", message: "No endpoint given." };
  const enabled = text(form, "enabled") === "true";
  const result = await setWebhookEnabled(id, enabled);
  revalidatePath("/webhooks");
  if (!result.ok) return errorState(result.error);
  return { status: "success", message: enabled ? "Enabled." : "Disabled." };
}

/** Answers the endpoint's new signing secret once, in the action's state, as creation does. */
export async function rotateWebhookSecretAction(_state: ActionState, form: FormData): Promise<ActionState> {
  const id = text(form, "id");
  if (!id) return { status: "error", message: "No endpoint given." };
  const result = await rotateWebhookSecret(id);
  revalidatePath("/webhooks");
  if (!result.ok) return errorState(result.error);
  return { status: "success", message: "Secret rotated.", secret: result.data.secret };
}

export async function deleteWebhookAction(_state: ActionState, form: FormData): Promise<ActionState> {
  const id = text(form, "id");
  if (!id) return { status: "error", message: "No endpoint given." };
  const result = await deleteWebhook(id);
  revalidatePath("/webhooks");
  if (!result.ok) return errorState(result.error);
  return { status: "success", message: "Endpoint deleted." };
}
