/**
 * A validated SubmitWorkflowInput with every default decided (like
 * normalizeTaskSpec for tasks), so storage never has to know the defaults.
 */
import { normalizeTaskSpec, type TaskSpec } from "../schemas/task-spec.js";
import { distinctDependencies } from "./workflow-graph.js";
import type { SubmitWorkflowInput } from "./workflow-input.js";

export interface WorkflowTaskSpec extends TaskSpec {
  key: string;
  /** Distinct keys of the tasks this one waits for; empty for a root. */
  dependsOn: string[];
}

export interface WorkflowSpec {
  name: string;
  idempotencyKey: string | null;
  /** In input order. */
  tasks: WorkflowTaskSpec[];
}

/** `input` must have passed submitWorkflowInputSchema and validateWorkflowGraph. */
export function normalizeWorkflowSpec(input: SubmitWorkflowInput, nowMs: number): WorkflowSpec {
  return {
    name: input.name,
    idempotencyKey: input.idempotencyKey ?? null,
    tasks: input.tasks.map((t) => ({
      ...normalizeTaskSpec(
        { type: t.type, queue: t.queue, payload: t.payload, priority: t.priority, maxAttempts: t.maxAttempts, backoff: t.backoff, timeoutSeconds: t.timeoutSeconds },
        nowMs,
      ),
      key: t.key,
      dependsOn: distinctDependencies(t),
    })),
  };
}
