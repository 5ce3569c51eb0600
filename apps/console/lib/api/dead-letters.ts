/** The dead-letter queue in bulk: one redriveDeadLetterTasks / discardDeadLetterTasks call. */
import "server-only";
import { gql } from "../gateway";
import type { ApiResult } from "../graphql-error";

export type DeadLetterBulkOperation = "redrive" | "discard";

export interface DeadLetterBatch {
  count: number;
  hasMore: boolean;
}

const MUTATION: Record<DeadLetterBulkOperation, "redriveDeadLetterTasks" | "discardDeadLetterTasks"> = {
  redrive: "redriveDeadLetterTasks",
  discard: "discardDeadLetterTasks",
};

/** Up to `max` of the dead tasks of `queue` (null: every queue), the one that died first first. */
export async function runDeadLetterBatch(operation: DeadLetterBulkOperation, queue: string | null, max: number): Promise<ApiResult<DeadLetterBatch>> {
  const field = MUTATION[operation];
  const result = await gql<Record<string, DeadLetterBatch>>(
    `mutation ConsoleDeadLetterBatch($queue: String, $max: Int) { ${field}(queue: $queue, max: $max) { count hasMore } }`,
    { queue, max },
  );
  return result.ok ? { ok: true, data: result.data[field] as DeadLetterBatch } : result;
}
