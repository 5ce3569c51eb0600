/** GraphQL shapes and calls for workflow tests. */
import { waitFor } from "./app-process.js";
import { gql, type GqlResponse, type StartedGateway } from "./platform.js";

export interface WorkflowTaskView {
  key: string;
  dependsOn: string[];
  task: { id: string; status: string; result: unknown; attempts: number; workflowId: string | null; queue: string; cancelRequested: boolean };
}

export interface WorkflowView {
  id: string;
  name: string;
  status: string;
  createdAt: string;
  completedAt: string | null;
  tasks: WorkflowTaskView[];
}

export const WORKFLOW = `id name status createdAt completedAt tasks { key dependsOn task { id status result attempts workflowId queue cancelRequested } }`;

export interface WorkflowApi {
  call<T = Record<string, unknown>>(query: string, variables?: Record<string, unknown>): Promise<GqlResponse<T>>;
  submit(input: Record<string, unknown>): Promise<GqlResponse<{ submitWorkflow: WorkflowView }>>;
  /** Submits and fails the test on any error. */
  submitOk(input: Record<string, unknown>): Promise<WorkflowView>;
  read(id: string): Promise<WorkflowView | null>;
  /** Polls until the workflow leaves RUNNING (or `timeoutMs`). */
  settled(id: string, timeoutMs?: number): Promise<WorkflowView>;
}

export function workflowApi(gateway: () => StartedGateway, apiKey: () => string): WorkflowApi {
  const call = <T = Record<string, unknown>>(query: string, variables?: Record<string, unknown>) => gql<T>(gateway().url, query, variables, apiKey());
  const submit = (input: Record<string, unknown>) =>
    call<{ submitWorkflow: WorkflowView }>(`mutation ($i: SubmitWorkflowInput!) { submitWorkflow(input: $i) { ${WORKFLOW} } }`, { i: input });
  const read = async (id: string) => (await call<{ workflow: WorkflowView | null }>(`query ($id: ID!) { workflow(id: $id) { ${WORKFLOW} } }`, { id })).data?.workflow ?? null;
  return {
    call,
    submit,
    async submitOk(input) {
      const res = await submit(input);
      if (!res.data?.submitWorkflow) throw new Error(`submitWorkflow failed: ${JSON.stringify(res.errors)}`);
      return res.data.submitWorkflow;
    },
    read,
    async settled(id, timeoutMs = 30_000) {
      // Polls the status alone: reading 1,000 tasks ten times a second would load the very system under test.
      await waitFor(
        `workflow ${id} to finish`,
        async () => {
          const res = await call<{ workflow: { status: string } | null }>(`query ($id: ID!) { workflow(id: $id) { status } }`, { id });
          const status = res.data?.workflow?.status;
          return status !== undefined && status !== "RUNNING";
        },
        timeoutMs,
        100,
      );
      const wf = await read(id);
      if (!wf) throw new Error(`workflow ${id} vanished`);
      return wf;
    },
  };
}

/** The task of a key, failing loudly when absent. */
export function taskOf(wf: WorkflowView, key: string): WorkflowTaskView["task"] {
  const found = wf.tasks.find((t) => t.key === key);
  if (!found) throw new Error(`workflow ${wf.id} has no task "${key}"`);
  return found.task;
}
