/**
 * What a workflow task's `ctx.parents` holds for a parent whose result the
 * lease left out: parents' results are handed in key order up to 1 MiB in all
 * (MAX_INLINE_PARENT_RESULTS_BYTES), and each one past that is a marker
 * naming the parent, whose result is read with `client.tasks.get(taskId)`.
 */
import type { OmittedParentResult } from "@tasklane/core/limits";

export type { OmittedParentResult };

/** Whether a `ctx.parents` entry is the marker of a result left out, rather than the result. */
export function isOmittedParentResult(value: unknown): value is OmittedParentResult {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as { resultOmitted?: unknown }).resultOmitted === true &&
    typeof (value as { taskId?: unknown }).taskId === "string" &&
    typeof (value as { resultBytes?: unknown }).resultBytes === "number"
  );
}
