"use server";

import { revalidatePath } from "next/cache";
import { errorState, type ActionState } from "@/lib/action-state";
import { createApiKey, revokeApiKey } from "@/lib/api/api-keys";
import { all, text } from "@/lib/form-data";
import { requireSession } from "@/lib/session";

/** Answers the new key's secret once, in the action's state; only its hash is kept by the API. */
export async function createApiKeyAction(_state: ActionState, form: FormData): Promise<ActionState> {
  const name = text(form, "name") ?? "";
  const scopes = all(form, "scopes");
  if (scopes.length === 0) return { status: "error", message: "Choose at least one scope.", fieldErrors: { scopes: "Choose at least one scope." } };
  const result = await createApiKey(name, scopes);
  if (!result.ok) return errorState(result.error, { name: "name", scopes: "scopes" });
  revalidatePath("/api-keys");
  return { status: "success", message: `Key “${result.data.apiKey.name}” created.`, secret: result.data.secret };
}

export async function revokeApiKeyAction(_state: ActionState, form: FormData): Promise<ActionState> {
  const id = text(form, "id");
  if (!id) return { status: "error", message: "No key given." };
  const session = await requireSession();
  if (id === session.apiKeyId) return { status: "error", message: "This key is your own console session; sign out to end it." };
  const result = await revokeApiKey(id);
  revalidatePath("/api-keys");
  if (!result.ok) return errorState(result.error);
  return { status: "success", message: "Key revoked. Requests with it are refused within seconds." };
}
