"use client";

import { createApiKeyAction } from "@/app/(console)/api-keys/actions";
import { API_KEY_SCOPES } from "@/lib/statuses";
import { Field } from "../ui/Field";
import { FormStatus } from "../ui/FormStatus";
import { SecretReveal } from "../ui/SecretReveal";
import { SubmitButton } from "../ui/SubmitButton";
import { useFormAction } from "../ui/useFormAction";

export function ApiKeyForm() {
  // A refused submission keeps what was typed; a created one clears the form for the next.
  const { state, formProps } = useFormAction(createApiKeyAction, { resetOnSuccess: true });
  const errors = state.fieldErrors ?? {};
  return (
    <form {...formProps} className="form" aria-label="Create an API key">
      <Field id="key-name" label="Name" hint="What uses it, e.g. billing-service production." error={errors.name}>
        {(p) => <input {...p} name="name" type="text" required maxLength={200} autoComplete="off" />}
      </Field>
      <fieldset aria-describedby={errors.scopes ? "scopes-error" : undefined}>
        <legend className="label">Scopes</legend>
        <div className="stack" style={{ gap: "0.35rem" }}>
          {API_KEY_SCOPES.map((scope) => (
            <label key={scope.value} className="choice">
              <input type="checkbox" name="scopes" value={scope.value} defaultChecked={scope.value === "submit"} />
              <span>
                {scope.label} <span className="muted small">— {scope.hint}</span>
              </span>
            </label>
          ))}
        </div>
        {errors.scopes ? (
          <span className="field-error" id="scopes-error">
            {errors.scopes}
          </span>
        ) : null}
      </fieldset>
      {state.secret ? <SecretReveal secret={state.secret} label={state.message ?? "Key created."} /> : <FormStatus state={state} />}
      <div>
        <SubmitButton pending="Creating…">Create key</SubmitButton>
      </div>
    </form>
  );
}
