/** Tasks and the dead-letter queue. */
import "server-only";
import { gql } from "../gateway";
import type { ApiFailure, ApiResult } from "../graphql-error";
import type { TaskStatus } from "../statuses";
import type { TaskDetail, TaskPage } from "./types";

/** The list's columns only: payloads and results can be 256 KiB each. */
const SUMMARY = `id type queue status priority runAt createdAt completedAt attempts maxAttempts lastError`;
const DETAIL = `${SUMMARY} payload result startedAt idempotencyKey orderingKey workflowId scheduleId cancelRequested replayOf
  attemptHistory { number workerId leaseToken startedAt finishedAt outcome error }`;

export interface TaskFilterInput {
  status?: TaskStatus[];
  queue?: string;
  type?: string;
  createdAfter?: string;
  createdBefore?: string;
}

export async function listTasks(filter: TaskFilterInput, first: number, after?: string): Promise<ApiResult<TaskPage>> {
  const result = await gql<{ tasks: TaskPage }>(
    `query ConsoleTasks($filter: TaskFilter, $first: Int, $after: String) {
      tasks(filter: $filter, first: $first, after: $after) { nodes { ${SUMMARY} } pageInfo { hasNextPage endCursor } totalCount }
    }`,
    { filter, first, after: after ?? null },
  );
  return result.ok ? { ok: true, data: result.data.tasks } : result;
}

export async function listDeadLetters(queue: string | undefined, first: number, after?: string): Promise<ApiResult<TaskPage>> {
  const result = await gql<{ deadLetterTasks: TaskPage }>(
    `query ConsoleDeadLetters($queue: String, $first: Int, $after: String) {
      deadLetterTasks(queue: $queue, first: $first, after: $after) { nodes { ${SUMMARY} } pageInfo { hasNextPage endCursor } totalCount }
    }`,
    { queue: queue ?? null, first, after: after ?? null },
  );
  return result.ok ? { ok: true, data: result.data.deadLetterTasks } : result;
}

export async function getTask(id: string): Promise<ApiResult<TaskDetail | null>> {
  const result = await gql<{ task: TaskDetail | null }>(`query ConsoleTask($id: ID!) { task(id: $id) { ${DETAIL} } }`, { id });
  return result.ok ? { ok: true, data: result.data.task } : result;
}

export type TaskOperation = "cancelTask" | "redriveTask" | "discardTask";

export async function runTaskOperation(operation: TaskOperation, id: string): Promise<ApiResult<{ id: string; status: TaskStatus }>> {
  const result = await gql<Record<TaskOperation, { id: string; status: TaskStatus }>>(
    `mutation ConsoleTaskOperation($id: ID!) { ${operation}(id: $id) { id status } }`,
    { id },
  );
  return result.ok ? { ok: true, data: result.data[operation] } : result;
}

export interface BulkOutcome {
  done: string[];
  failed: { id: string; error: ApiFailure }[];
}

/**
 * One operation over many tasks, 25 calls in flight at a time, one call per
 * task so each answer is exact: one task's refusal (CONFLICT: someone
 * redrove it meanwhile) does not stop the others.
 */
export async function runBulkOperation(operation: "redriveTask" | "discardTask", ids: string[]): Promise<BulkOutcome> {
  const outcome: BulkOutcome = { done: [], failed: [] };
  for (let offset = 0; offset < ids.length; offset += 25) {
    const chunk = ids.slice(offset, offset + 25);
    const results = await Promise.all(chunk.map((id) => runTaskOperation(operation, id)));
    results.forEach((result, i) => {
      const id = chunk[i] as string;
      if (result.ok) outcome.done.push(id);
      else outcome.failed.push({ id, error: result.error });
    });
  }
  return outcome;
}
