/**
 * The tenant's client: one object per API key, one property per API resource.
 *
 * ```ts
 * const client = new TasklaneClient({ url: "http://127.0.0.1:4000/graphql", apiKey });
 * const task = await client.tasks.submit({ type: "email.send", payload: { to } });
 * ```
 */
import { LiveResource, type LiveOptions } from "./live.js";
import { LeasesResource } from "./resources/leases.js";
import { QueuesResource } from "./resources/queues.js";
import { SchedulesResource } from "./resources/schedules.js";
import { TasksResource } from "./resources/tasks.js";
import { OperatorResource, TenantResource } from "./resources/tenant.js";
import { WebhooksResource } from "./resources/webhooks.js";
import { WorkflowsResource } from "./resources/workflows.js";
import { GraphQLTransport, type CallOptions, type TransportOptions } from "./transport.js";

export type TasklaneClientOptions = TransportOptions & LiveOptions;

export interface RawRequestOptions extends CallOptions {
  /**
   * Whether the transport may repeat this operation after an ambiguous
   * failure (timeout, reset, 5xx). Throttling refusals are retried either way.
   * @defaultValue true for documents starting with `query`, false otherwise
   */
  idempotent?: boolean;
}

export class TasklaneClient {
  readonly tasks: TasksResource;
  readonly queues: QueuesResource;
  readonly leases: LeasesResource;
  readonly schedules: SchedulesResource;
  readonly workflows: WorkflowsResource;
  readonly webhooks: WebhooksResource;
  readonly tenant: TenantResource;
  /** createTenant / updateTenant: only with the platform admin token as apiKey. */
  readonly operator: OperatorResource;
  /** Subscriptions (taskUpdated, workflowUpdated) as async iterators, over graphql-ws. */
  readonly live: LiveResource;
  readonly #transport: GraphQLTransport;

  constructor(options: TasklaneClientOptions) {
    this.#transport = new GraphQLTransport(options);
    this.live = new LiveResource(options.url, options.apiKey, options);
    this.tasks = new TasksResource(this.#transport, this.live);
    this.queues = new QueuesResource(this.#transport);
    this.leases = new LeasesResource(this.#transport);
    this.schedules = new SchedulesResource(this.#transport);
    this.workflows = new WorkflowsResource(this.#transport);
    this.webhooks = new WebhooksResource(this.#transport);
    this.tenant = new TenantResource(this.#transport);
    this.operator = new OperatorResource(this.#transport);
  }

  /** The GraphQL endpoint this client talks to. */
  get url(): string {
    return this.#transport.url;
  }

  /**
   * Any operation, for API additions the SDK does not wrap yet. Returns the
   * response's `data`; errors are thrown as TasklaneError like everywhere else.
   */
  async request<TData = Record<string, unknown>>(document: string, variables: Record<string, unknown> = {}, options: RawRequestOptions = {}): Promise<TData> {
    const { idempotent, ...call } = options;
    return this.#transport.execute<TData>(
      { operation: operationNameOf(document), document, idempotent: idempotent ?? /^\s*(query\b|\{)/.test(document) },
      variables,
      call,
    );
  }
}

function operationNameOf(document: string): string {
  return /^\s*(?:query|mutation|subscription)\s+([A-Za-z_][A-Za-z0-9_]*)/.exec(document)?.[1] ?? "request";
}
