/** rescheduleTask: the task page's "Run now" and "Reschedule". */
import "server-only";
import { gql } from "../gateway";
import type { ApiResult } from "../graphql-error";
import type { TaskStatus } from "../statuses";

/** `runAt` null: now. */
export async function rescheduleTask(id: string, runAt: string | null): Promise<ApiResult<{ id: string; status: TaskStatus; runAt: string }>> {
  const result = await gql<{ rescheduleTask: { id: string; status: TaskStatus; runAt: string } }>(
    `mutation ConsoleRescheduleTask($id: ID!, $runAt: DateTime) { rescheduleTask(id: $id, runAt: $runAt) { id status runAt } }`,
    { id, runAt },
  );
  return result.ok ? { ok: true, data: result.data.rescheduleTask } : result;
}
