"use client";

import { useActionState, useEffect, useEffectEvent, useId, useRef } from "react";
import { IDLE, type ActionState } from "@/lib/action-state";
import { SubmitButton } from "./SubmitButton";

type Action = (state: ActionState, form: FormData) => Promise<ActionState>;

/**
 * A button that asks first. The question lives in a native modal <dialog>
 * (focus moves into it and back, Escape cancels); confirming submits a form
 * to a server action, which is POST-only and origin-checked by Next.
 */
export function ConfirmButton({
  label,
  title,
  description,
  confirmLabel,
  action,
  fields,
  variant = "plain",
  prominent = false,
  small = false,
  disabled = false,
  onSuccess,
}: {
  label: string;
  title: string;
  description: string;
  confirmLabel: string;
  action: Action;
  fields: Record<string, string | string[]>;
  /** Colour of the confirming button inside the dialog. */
  variant?: "primary" | "danger" | "plain";
  /** Give the opening button that colour too (the page's main action); otherwise it stays neutral. */
  prominent?: boolean;
  small?: boolean;
  disabled?: boolean;
  /** Called once per successful confirmation (e.g. to clear a selection the action consumed). */
  onSuccess?: () => void;
}) {
  const dialogRef = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const descriptionId = useId();
  const [state, formAction] = useActionState(action, IDLE);

  // An effect event: a parent's new onSuccess on a later render must not count as another success.
  const succeeded = useEffectEvent(() => onSuccess?.());

  useEffect(() => {
    if (state.status !== "idle") dialogRef.current?.close();
    if (state.status === "success") succeeded();
  }, [state]);

  const tone = prominent ? variant : "plain";
  const buttonClass = ["button", tone === "danger" ? "button-danger" : tone === "primary" ? "button-primary" : "", small ? "button-small" : ""].filter(Boolean).join(" ");
  return (
    <>
      <button type="button" className={buttonClass} disabled={disabled} onClick={() => dialogRef.current?.showModal()}>
        {label}
      </button>
      <dialog ref={dialogRef} className="confirm" aria-labelledby={titleId} aria-describedby={descriptionId}>
        <form action={formAction}>
          {Object.entries(fields).flatMap(([name, value]) =>
            (Array.isArray(value) ? value : [value]).map((v) => <input key={`${name}=${v}`} type="hidden" name={name} value={v} />),
          )}
          <h2 id={titleId}>{title}</h2>
          <p id={descriptionId}>{description}</p>
          <div className="dialog-actions">
            <button type="button" className="button" onClick={() => dialogRef.current?.close()} autoFocus>
              Cancel
            </button>
            <SubmitButton variant={variant === "plain" ? "primary" : variant}>{confirmLabel}</SubmitButton>
          </div>
        </form>
      </dialog>
      {state.status === "error" && state.message ? (
        <span role="alert" className="field-error small">
          {state.message}
        </span>
      ) : state.status === "success" && state.message ? (
        <span role="status" className="muted small">
          {state.message}
          {state.href ? (
            <>
              {" "}
              <a href={state.href}>Open it</a>
            </>
          ) : null}
        </span>
      ) : null}
    </>
  );
}
