"use client";

import { startTransition, useActionState, useEffect, useRef, type FormEvent } from "react";
import { IDLE, type ActionState } from "@/lib/action-state";

type Action = (state: ActionState, form: FormData) => Promise<ActionState>;

/**
 * useActionState for a form whose inputs must survive a rejected submission.
 *
 * React 19 resets a `<form action={fn}>` once fn settles, success or not, so a
 * refused form would come back empty. Submitting from onSubmit inside a
 * transition keeps the inputs (React then only tracks the pending status,
 * which SubmitButton's useFormStatus still sees); `action` stays on the form
 * so a submission before hydration still reaches the server action.
 * `resetOnSuccess` clears a create-another form once its thing exists.
 */
export function useFormAction(fn: Action, { resetOnSuccess = false }: { resetOnSuccess?: boolean } = {}) {
  const [state, action] = useActionState(fn, IDLE);
  const ref = useRef<HTMLFormElement>(null);
  useEffect(() => {
    if (resetOnSuccess && state.status === "success") ref.current?.reset();
  }, [state, resetOnSuccess]);
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const data = new FormData(event.currentTarget, (event.nativeEvent as SubmitEvent).submitter);
    startTransition(() => action(data));
  };
  return { state, formProps: { ref, action, onSubmit } };
}
