"use client";

import { useState, type ReactNode } from "react";
import { rotateWebhookSecretAction } from "@/app/(console)/webhooks/actions";
import type { ActionState } from "@/lib/action-state";
import { ConfirmButton } from "../ui/ConfirmButton";
import { SecretReveal } from "../ui/SecretReveal";

/**
 * An endpoint's buttons: "Rotate secret" first, then `children` (enable or
 * disable, delete). A rotation's new secret is shown once below them, as a new
 * endpoint's is after creation; it lives only in this component's state.
 */
export function WebhookActions({ id, children }: { id: string; children: ReactNode }) {
  const [secret, setSecret] = useState<string | null>(null);
  async function rotate(state: ActionState, form: FormData): Promise<ActionState> {
    const next = await rotateWebhookSecretAction(state, form);
    setSecret(next.status === "success" ? (next.secret ?? null) : null);
    return next;
  }
  return (
    <>
      <span className="row" style={{ flexWrap: "nowrap" }}>
        <ConfirmButton
          small
          label="Rotate secret"
          title="Rotate this endpoint's signing secret?"
          description="A new secret signs every delivery from now on; it is shown once. The current secret keeps signing beside it for 24 h, so your receiver keeps verifying while you switch it over. Rotating again within those 24 h ends the current secret at once."
          confirmLabel="Rotate secret"
          variant="primary"
          action={rotate}
          fields={{ id }}
        />
        {children}
      </span>
      {secret ? <SecretReveal secret={secret} label="New signing secret for this endpoint; the previous one also signs for 24 h." /> : null}
    </>
  );
}
