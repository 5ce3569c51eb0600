import type { ReactNode } from "react";
import { describeFailure } from "@/lib/action-state";
import { inSentence } from "@/lib/format";
import type { ApiFailure } from "@/lib/graphql-error";

/**
 * A section whose data could not be loaded. A feature the platform has not
 * shipped yet ("not available yet") gets its own, calmer wording.
 */
export function ErrorState({ error, what, action }: { error: ApiFailure; what: string; action?: ReactNode }) {
  if (error.notAvailable) {
    return (
      <section className="state" role="status" aria-label={`${what} not available yet`}>
        <div className="state-icon" aria-hidden="true">
          ◔
        </div>
        <h2>{what} are not available yet</h2>
        <p>This Tasklane platform does not offer {inSentence(what)} yet. The console will show them here as soon as the API does; nothing is wrong with your account.</p>
        <p className="code">{error.message}</p>
      </section>
    );
  }
  return (
    <section className="state state-error" role="alert" aria-label={`Could not load ${inSentence(what)}`}>
      <div className="state-icon" aria-hidden="true">
        !
      </div>
      <h2>Could not load {inSentence(what)}</h2>
      <p>{describeFailure(error)}</p>
      <p className="code">{error.code}</p>
      {action ?? (
        <a className="button" href="">
          Try again
        </a>
      )}
    </section>
  );
}
