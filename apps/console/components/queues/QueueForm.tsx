"use client";

import { MAX_QUEUE_NAME_LENGTH, QUEUE_NAME_RULE } from "@tasklane/core/limits";
import Link from "next/link";
import { useState } from "react";
import { saveQueueAction } from "@/app/(console)/queues/actions";
import type { Queue } from "@/lib/api/types";
import { Field } from "../ui/Field";
import { FormStatus } from "../ui/FormStatus";
import { SubmitButton } from "../ui/SubmitButton";
import { useFormAction } from "../ui/useFormAction";

/**
 * Create a queue, or edit one (its name is fixed: the API addresses queues by
 * name). Pausing is not part of editing: the page's Pause/Resume button owns it.
 */
export function QueueForm({ queue }: { queue?: Queue }) {
  const { state, formProps } = useFormAction(saveQueueAction);
  const [mode, setMode] = useState<"PUSH" | "PULL">(queue?.mode ?? "PUSH");
  const errors = state.fieldErrors ?? {};
  return (
    <form {...formProps} className="form card" aria-label={queue ? `Edit queue ${queue.name}` : "New queue"}>
      {queue ? (
        <>
          <input type="hidden" name="editing" value="1" />
          <input type="hidden" name="name" value={queue.name} />
        </>
      ) : (
        <Field id="name" label="Name" hint={`Must be ${QUEUE_NAME_RULE}, e.g. emails.`} error={errors.name}>
          {(p) => <input {...p} name="name" type="text" required maxLength={MAX_QUEUE_NAME_LENGTH} autoComplete="off" spellCheck={false} />}
        </Field>
      )}
      <fieldset>
        <legend className="label">Mode</legend>
        <div className="choices">
          <label className="choice">
            <input type="radio" name="mode" value="PUSH" checked={mode === "PUSH"} onChange={() => setMode("PUSH")} />
            <span>
              PUSH <span className="muted small">— Tasklane POSTs each task to your endpoint</span>
            </span>
          </label>
          <label className="choice">
            <input type="radio" name="mode" value="PULL" checked={mode === "PULL"} onChange={() => setMode("PULL")} />
            <span>
              PULL <span className="muted small">— your workers lease tasks through the API</span>
            </span>
          </label>
        </div>
      </fieldset>
      {mode === "PUSH" ? (
        <Field id="endpointUrl" label="Endpoint URL" hint="HTTPS endpoint receiving {taskId, type, payload, attempt} (and parents for a workflow's task), signed like webhooks." error={errors.endpointUrl}>
          {(p) => <input {...p} name="endpointUrl" type="url" required defaultValue={queue?.endpointUrl ?? ""} placeholder="https://example.com/tasks" />}
        </Field>
      ) : null}
      <div className="form-row">
        <Field id="concurrency" label="Concurrency" hint="Most tasks of this queue running at once. Blank: no limit." error={errors.concurrency}>
          {(p) => <input {...p} name="concurrency" type="number" min={1} inputMode="numeric" defaultValue={queue?.concurrency ?? ""} />}
        </Field>
        <Field id="ratePerSecond" label="Rate limit (starts per second)" hint="Blank: no limit." error={errors.ratePerSecond}>
          {(p) => <input {...p} name="ratePerSecond" type="number" min={0} step="any" inputMode="decimal" defaultValue={queue?.rateLimit?.perSecond ?? ""} />}
        </Field>
        <Field id="rateBurst" label="Burst" hint="Starts allowed at once; default: the rate." error={errors.rateBurst}>
          {(p) => <input {...p} name="rateBurst" type="number" min={1} inputMode="numeric" defaultValue={queue?.rateLimit?.burst ?? ""} />}
        </Field>
      </div>
      {queue ? null : (
        <label className="choice">
          <input type="checkbox" name="paused" /> Start paused (hold queued tasks until resumed)
        </label>
      )}
      <FormStatus state={state} />
      <div className="row">
        <SubmitButton pending="Saving…">{queue ? "Save changes" : "Create queue"}</SubmitButton>
        <Link className="button" href="/queues">
          Cancel
        </Link>
      </div>
    </form>
  );
}
