"use client";

import { useRouter } from "next/navigation";
import { useId, useRef, useState } from "react";
import { deadLetterStepAction } from "@/app/(console)/tasks/actions";

type Operation = "redrive" | "discard";

/** Tasks one step asks for: one server action call, one bulk mutation. */
const STEP = 1_000;

const VERB: Record<Operation, { label: string; done: string }> = {
  redrive: { label: "Redrive", done: "Redriven" },
  discard: { label: "Discard", done: "Discarded" },
};

const count = (n: number) => n.toLocaleString("en-US");

interface Progress {
  operation: Operation;
  done: number;
  total: number;
  running: boolean;
  error?: string;
  /** Why it ended short of the total, when it did. */
  note?: string;
}

/**
 * "Redrive all" / "Discard all" for the list's filter (one queue or every queue): after a
 * confirmation naming how many, calls the bulk mutation 1,000 tasks at a time from here (one
 * server action call each) so the page shows how far it got, stops at the first refusal saying
 * so, and refreshes the list at the end. Never more than the count confirmed: tasks that die
 * meanwhile wait for the next "all".
 */
export function DeadLetterBulkAll({ queue, total: listed }: { queue: string | null; /** null: the list could not be read. */ total: number | null }) {
  const router = useRouter();
  const dialogRef = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const descriptionId = useId();
  const [asking, setAsking] = useState<Operation>("redrive");
  const [progress, setProgress] = useState<Progress | null>(null);
  const running = progress?.running === true;
  const total = listed ?? 0;
  const where = queue === null ? "in every queue" : `in ${queue}`;
  const tasks = `${count(total)} dead task${total === 1 ? "" : "s"}`;

  const ask = (operation: Operation) => {
    setAsking(operation);
    dialogRef.current?.showModal();
  };

  async function run(operation: Operation) {
    dialogRef.current?.close();
    const confirmed = total;
    let done = 0;
    setProgress({ operation, done, total: confirmed, running: true });
    try {
      for (;;) {
        const step = await deadLetterStepAction(operation, queue, Math.min(STEP, confirmed - done));
        if (!step.ok) {
          setProgress({ operation, done, total: confirmed, running: false, error: step.message });
          return;
        }
        done += step.count;
        const finished = !step.hasMore || step.count === 0 || done >= confirmed;
        const note =
          finished && done < confirmed && operation === "redrive"
            ? "The others are workflow tasks, which are not redriven on their own (submit their workflows again), or were taken meanwhile."
            : undefined;
        setProgress({ operation, done, total: confirmed, running: !finished, ...(note ? { note } : {}) });
        if (finished) return;
      }
    } catch {
      setProgress({ operation, done, total: confirmed, running: false, error: "The console could not reach its server. Try again." });
    } finally {
      router.refresh();
    }
  }

  // Nothing to offer while the list is empty or cannot be read, unless a run has something to say.
  if (total === 0 && progress === null) return null;
  const verb = VERB[asking];
  return (
    <div className="card row" style={{ justifyContent: "space-between", marginBottom: "0.75rem" }}>
      {progress ? (
        <span role={progress.error ? "alert" : "status"} aria-live="polite" className={progress.error ? "field-error" : undefined} data-testid="dead-letter-bulk-progress">
          {`${VERB[progress.operation].done} ${count(progress.done)} of ${count(progress.total)}${progress.running ? "…" : "."}`}
          {progress.error ? ` Stopped: ${progress.error}` : null}
          {progress.note ? ` ${progress.note}` : null}
        </span>
      ) : (
        <span>{`${tasks} ${where}.`}</span>
      )}
      <span className="row">
        <button type="button" className="button" disabled={total === 0 || running} onClick={() => ask("redrive")}>
          Redrive all
        </button>
        <button type="button" className="button" disabled={total === 0 || running} onClick={() => ask("discard")}>
          Discard all
        </button>
      </span>
      <dialog ref={dialogRef} className="confirm" aria-labelledby={titleId} aria-describedby={descriptionId}>
        <h2 id={titleId}>{`${verb.label} all ${tasks} ${where}?`}</h2>
        <p id={descriptionId}>
          {asking === "redrive"
            ? "Each goes back to QUEUED with a fresh attempt budget and runs again, the one that died first first. Workflow tasks are left as they are."
            : "They leave the dead-letter queue as CANCELLED and will not run again. Their history is kept."}
        </p>
        <div className="dialog-actions">
          <button type="button" className="button" onClick={() => dialogRef.current?.close()} autoFocus>
            Cancel
          </button>
          <button type="button" className={`button ${asking === "redrive" ? "button-primary" : "button-danger"}`} onClick={() => void run(asking)}>
            {`${verb.label} ${tasks}`}
          </button>
        </div>
      </dialog>
    </div>
  );
}
