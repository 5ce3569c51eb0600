"use client";

import { createWebhookAction } from "@/app/(console)/webhooks/actions";
import { WEBHOOK_EVENTS } from "@/lib/statuses";
import { Field } from "../ui/Field";
import { FormStatus } from "../ui/FormStatus";
import { SecretReveal } from "../ui/SecretReveal";
import { SubmitButton } from "../ui/SubmitButton";
import { useFormAction } from "../ui/useFormAction";

export function WebhookForm() {
  // A refused submission keeps what was typed; a created one clears the form for the next.
  const { state, formProps } = useFormAction(createWebhookAction, { resetOnSuccess: true });
  const errors = state.fieldErrors ?? {};
  return (
    <form {...formProps} className="form" aria-label="Add a webhook endpoint">
      <Field id="url" label="Endpoint URL" hint="Receives signed JSON envelopes (Standard Webhooks headers)." error={errors.url}>
        {(p) => <input {...p} name="url" type="url" required placeholder="https://example.com/hooks/tasklane" />}
      </Field>
      <fieldset aria-describedby={errors.events ? "events-error" : undefined}>
        <legend className="label">Events</legend>
        <div className="choices">
          {WEBHOOK_EVENTS.map((event) => (
            <label key={event} className="choice">
              <input type="checkbox" name="events" value={event} defaultChecked={event === "task.dead"} /> <span className="mono">{event}</span>
            </label>
          ))}
          <label className="choice">
            <input type="checkbox" name="events" value="*" /> Every event
          </label>
        </div>
        {errors.events ? (
          <span className="field-error" id="events-error">
            {errors.events}
          </span>
        ) : null}
      </fieldset>
      {state.secret ? <SecretReveal secret={state.secret} label="Signing secret for this endpoint." /> : <FormStatus state={state} />}
      <div>
        <SubmitButton pending="Adding…">Add endpoint</SubmitButton>
      </div>
    </form>
  );
}
