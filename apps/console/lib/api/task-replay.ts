/** replayTask: a finished task run again as a new task (the task page's "Replay"). */
import "server-only";
import { gql } from "../gateway";
import type { ApiResult } from "../graphql-error";

/** The new task's id; refusals (an unfinished or workflow task: CONFLICT; quotas) come back as the API gives them. */
export async function replayTask(id: string): Promise<ApiResult<{ id: string }>> {
  const result = await gql<{ replayTask: { id: string } }>(`mutation ConsoleReplayTask($id: ID!) { replayTask(id: $id) { id } }`, { id });
  return result.ok ? { ok: true, data: result.data.replayTask } : result;
}
