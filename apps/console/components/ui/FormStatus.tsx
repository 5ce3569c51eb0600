import type { ActionState } from "@/lib/action-state";

/** The outcome of a form's last submission, announced to screen readers. */
export function FormStatus({ state }: { state: ActionState }) {
  if (state.status === "idle" || !state.message) return <div role="status" aria-live="polite" />;
  return (
    <div role={state.status === "error" ? "alert" : "status"} className={`notice ${state.status === "error" ? "notice-error" : "notice-success"}`}>
      {state.message}
      {state.href ? (
        <>
          {" "}
          <a href={state.href}>Open it</a>
        </>
      ) : null}
    </div>
  );
}
