/**
 * Whether an outcome refused with CONFLICT is one the gateway had already
 * recorded from the same lease: an outcome call whose answer was lost (a
 * timeout, a reset) and that is sent again meets its own effect, since the
 * finished attempt no longer holds the lease. The gateway's refusal reads the
 * same either way (STALE_LEASE), so the attempt that lease started says which:
 * its outcome is this one (SUCCEEDED for a completion, FAILED for a failure)
 * only when this lease's own call recorded it. Any other end (LEASE_EXPIRED,
 * CANCELLED, still running under another token) is a real conflict.
 *
 * Asked only after a CONFLICT that followed such a loss, never on the normal path.
 */
import { TASK_FIELDS } from "../graphql/fragments.js";
import type { CallOptions, GraphQLTransport } from "../transport.js";
import type { Task } from "../types.js";

/** The attempt outcome a finished outcome call leaves. */
export type RecordedOutcome = "SUCCEEDED" | "FAILED";

export interface LeaseRef {
  taskId: string;
  leaseToken: string;
}

/** Tasks per read: each is an alias, and the gateway allows 200 aliases an operation. */
const READ_CHUNK = 100;
/**
 * Tasks per read with their fields: each selects payload and result, and the
 * gateway allows 16 such selections an operation (its validation/body-selections.ts).
 */
const READ_CHUNK_WITH_TASKS = 8;

interface AttemptsOfTask {
  attemptHistory: Array<{ leaseToken: string | null; outcome: string | null }>;
}

/**
 * Of `leases`, those whose attempt the gateway finished with `outcome`, by
 * task id, each with the task as it is now when `withTask` (else null).
 */
export async function recordedOutcomes(
  transport: GraphQLTransport,
  leases: readonly LeaseRef[],
  outcome: RecordedOutcome,
  withTask: boolean,
  call: CallOptions = {},
): Promise<Map<string, Task | null>> {
  const recorded = new Map<string, Task | null>();
  const size = withTask ? READ_CHUNK_WITH_TASKS : READ_CHUNK;
  for (let i = 0; i < leases.length; i += size) {
    const chunk = leases.slice(i, i + size);
    const fields = withTask ? "...TaskFields attemptHistory { leaseToken outcome }" : "attemptHistory { leaseToken outcome }";
    const document = `query RecordedOutcomes(${chunk.map((_, j) => `$t${j}: ID!`).join(", ")}) {
  ${chunk.map((_, j) => `t${j}: task(id: $t${j}) { ${fields} }`).join("\n  ")}
}${withTask ? `\n${TASK_FIELDS}` : ""}`;
    const data = await transport.execute<Record<string, (Task & AttemptsOfTask) | null>>(
      { operation: "task", document, idempotent: true },
      Object.fromEntries(chunk.map((l, j) => [`t${j}`, l.taskId])),
      call,
    );
    chunk.forEach((lease, j) => {
      const task = data[`t${j}`];
      if (task?.attemptHistory.some((a) => a.leaseToken === lease.leaseToken && a.outcome === outcome) !== true) return;
      if (!withTask) {
        recorded.set(lease.taskId, null);
        return;
      }
      const { attemptHistory: _attempts, ...rest } = task;
      recorded.set(lease.taskId, rest);
    });
  }
  return recorded;
}
