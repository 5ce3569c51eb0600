/**
 * Workflows: DAGs of tasks (contract: submitWorkflow, cancelWorkflow,
 * workflow, workflows).
 */
import { ErrorCode, TasklaneError, isTasklaneError } from "../errors.js";
import { WORKFLOW_FIELDS } from "../graphql/fragments.js";
import type { CallOptions, GraphQLTransport, RetryLog } from "../transport.js";
import type { PageOptions, SubmitWorkflowInput, Workflow } from "../types.js";

const SUBMIT = `mutation SubmitWorkflow($input: SubmitWorkflowInput!) { submitWorkflow(input: $input) { ...WorkflowFields } }
${WORKFLOW_FIELDS}`;
const CANCEL = `mutation CancelWorkflow($id: ID!) { cancelWorkflow(id: $id) { ...WorkflowFields } }
${WORKFLOW_FIELDS}`;
const GET = `query Workflow($id: ID!) { workflow(id: $id) { ...WorkflowFields } }
${WORKFLOW_FIELDS}`;
const LIST = `query Workflows($first: Int, $after: String) { workflows(first: $first, after: $after) { ...WorkflowFields } }
${WORKFLOW_FIELDS}`;

export class WorkflowsResource {
  readonly #transport: GraphQLTransport;

  constructor(transport: GraphQLTransport) {
    this.#transport = transport;
  }

  /** A cycle or an unknown dependsOn key is BAD_USER_INPUT. Retried after an ambiguous failure only with an idempotencyKey. */
  async submit(input: SubmitWorkflowInput, opts?: CallOptions): Promise<Workflow> {
    const data = await this.#transport.execute<{ submitWorkflow: Workflow }>(
      { operation: "submitWorkflow", document: SUBMIT, idempotent: input.idempotencyKey != null },
      { input },
      opts,
    );
    return data.submitWorkflow;
  }

  /**
   * Cancels every unfinished task of the workflow; a finished workflow is CONFLICT, but for the
   * SDK's own repeat after a lost answer, which finds the workflow CANCELLED and answers it.
   */
  async cancel(id: string, opts?: CallOptions): Promise<Workflow> {
    const log: RetryLog = { ambiguous: false };
    try {
      const data = await this.#transport.execute<{ cancelWorkflow: Workflow }>({ operation: "cancelWorkflow", document: CANCEL, idempotent: true }, { id }, opts, log);
      return data.cancelWorkflow;
    } catch (error: unknown) {
      if (!log.ambiguous || !isTasklaneError(error, ErrorCode.CONFLICT)) throw error;
      const workflow = await this.get(id, opts);
      if (workflow?.status !== "CANCELLED") throw error;
      return workflow;
    }
  }

  async get(id: string, opts?: CallOptions): Promise<Workflow | null> {
    const data = await this.#transport.execute<{ workflow: Workflow | null }>({ operation: "workflow", document: GET, idempotent: true }, { id }, opts);
    return data.workflow;
  }

  /**
   * Newest first. The API answers a plain list, so the cursor is an id:
   * `after` is the id of the previous page's last workflow (see `iterate`).
   */
  async list(page: PageOptions = {}, opts?: CallOptions): Promise<Workflow[]> {
    const data = await this.#transport.execute<{ workflows: Workflow[] }>(
      { operation: "workflows", document: LIST, idempotent: true },
      { first: page.first, after: page.after },
      opts,
    );
    return data.workflows;
  }

  /**
   * Every workflow, newest first, page by page. One answer reads at most
   * 10,000 workflow tasks: a page of large workflows refused for that
   * (reason ANSWER_TASK_ROWS) is asked for again at half the size.
   */
  async *iterate(options: { pageSize?: number } & CallOptions = {}): AsyncGenerator<Workflow, void, undefined> {
    const { pageSize: requested = 50, ...opts } = options;
    let pageSize = requested;
    let after: string | null = null;
    for (;;) {
      let page: Workflow[];
      try {
        page = await this.list({ first: pageSize, after }, opts);
      } catch (error: unknown) {
        if (pageSize > 1 && error instanceof TasklaneError && error.extensions.reason === "ANSWER_TASK_ROWS") {
          pageSize = Math.ceil(pageSize / 2);
          continue;
        }
        throw error;
      }
      yield* page;
      const last = page.at(-1);
      if (page.length < pageSize || last === undefined) return;
      after = last.id;
    }
  }
}
