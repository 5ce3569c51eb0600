"use client";

import { isReschedulable } from "@tasklane/core/reschedule";
import { startTransition, useActionState, useId, useRef, useState, type FormEvent } from "react";
import { rescheduleAction } from "@/app/(console)/tasks/reschedule-actions";
import { IDLE } from "@/lib/action-state";
import type { TaskDetail } from "@/lib/api/types";
import { utc } from "@/lib/task-filters";
import { ConfirmButton } from "../ui/ConfirmButton";
import { SubmitButton } from "../ui/SubmitButton";

/**
 * "Run now" and "Reschedule" for a task waiting for its next attempt
 * (SCHEDULED, QUEUED, RETRYING: core's rule, as the API applies it). The
 * date-time input is UTC, as every time the console shows and takes (the
 * page's "Run at", the task list's From/To); read in the browser's zone
 * instead, a time copied from the page would move by the zone's offset. It
 * starts at the task's runAt and is sent as an ISO instant.
 */
export function RescheduleActions({ task }: { task: TaskDetail }) {
  if (!isReschedulable(task.status)) return null;
  // A new runAt (the action redirects back here) mounts them afresh: dialogs closed, messages gone.
  return <RescheduleControls key={task.runAt} task={task} />;
}

function RescheduleControls({ task }: { task: TaskDetail }) {
  const dialogRef = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const whenId = useId();
  const [when, setWhen] = useState(task.runAt.slice(0, 19));
  const [state, action] = useActionState(rescheduleAction, IDLE);
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const data = new FormData(event.currentTarget);
    const at = utc(when);
    if (at !== undefined) data.set("runAt", at);
    // Kept open on a refusal (the error shows beside the input); a success comes back with the new runAt, which mounts these afresh.
    startTransition(() => action(data));
  };
  return (
    <>
      <ConfirmButton
        label="Run now"
        title="Run this task now?"
        description={
          task.status === "RETRYING"
            ? "Its retry becomes due at once instead of after the backoff. Attempts, keys and its place in its ordering key stay."
            : "It becomes due at once and runs as soon as a worker is free. Attempts, keys and its place in its ordering key stay."
        }
        confirmLabel="Run now"
        variant="primary"
        action={rescheduleAction}
        fields={{ id: task.id, operation: "runNow" }}
      />
      <button type="button" className="button" onClick={() => dialogRef.current?.showModal()}>
        Reschedule
      </button>
      <dialog ref={dialogRef} className="confirm" aria-labelledby={titleId}>
        <form action={action} onSubmit={onSubmit}>
          <input type="hidden" name="id" value={task.id} />
          <h2 id={titleId}>Reschedule this task</h2>
          <div className="field">
            <label htmlFor={whenId}>Run at (UTC)</label>
            <input id={whenId} name="when" type="datetime-local" step={1} value={when} onChange={(e) => setWhen(e.target.value)} required />
            {state.status === "error" && state.message ? (
              <span role="alert" className="field-error">
                {state.fieldErrors?.when ?? state.message}
              </span>
            ) : null}
          </div>
          <div className="dialog-actions">
            <button type="button" className="button" onClick={() => dialogRef.current?.close()}>
              Cancel
            </button>
            <SubmitButton>Reschedule</SubmitButton>
          </div>
        </form>
      </dialog>
    </>
  );
}
