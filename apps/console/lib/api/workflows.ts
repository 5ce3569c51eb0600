/** Workflows (DAGs of tasks). */
import "server-only";
import { gql } from "../gateway";
import type { ApiResult } from "../graphql-error";
import type { Workflow, WorkflowSummary } from "./types";

/** taskCount, not tasks: a page of workflows read every one of their tasks (up to 2,000 each) only to count them. */
export async function listWorkflows(first: number, after?: string): Promise<ApiResult<(WorkflowSummary & { taskCount: number })[]>> {
  const result = await gql<{ workflows: (WorkflowSummary & { taskCount: number })[] }>(
    `query ConsoleWorkflows($first: Int, $after: String) { workflows(first: $first, after: $after) { id name status createdAt completedAt taskCount } }`,
    { first, after: after ?? null },
  );
  return result.ok ? { ok: true, data: result.data.workflows } : result;
}

export async function getWorkflow(id: string): Promise<ApiResult<Workflow | null>> {
  const result = await gql<{ workflow: Workflow | null }>(
    `query ConsoleWorkflow($id: ID!) { workflow(id: $id) {
      id name status createdAt completedAt
      tasks { key dependsOn task { id type status attempts maxAttempts lastError } }
    } }`,
    { id },
  );
  return result.ok ? { ok: true, data: result.data.workflow } : result;
}
