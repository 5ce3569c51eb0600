/** Workflows (DAGs of tasks). */
import "server-only";
import { gql } from "../gateway";
import type { ApiResult } from "../graphql-error";
import type { Workflow, WorkflowSummary } from "./types";

export async function listWorkflows(first: number, after?: string): Promise<ApiResult<(WorkflowSummary & { tasks: { key: string }[] })[]>> {
  const result = await gql<{ workflows: (WorkflowSummary & { tasks: { key: string }[] })[] }>(
    `query ConsoleWorkflows($first: Int, $after: String) { workflows(first: $first, after: $after) { id name status createdAt completedAt tasks { key } } }`,
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
