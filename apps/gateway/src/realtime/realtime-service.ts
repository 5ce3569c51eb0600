/**
 * What the Subscription resolvers stream. The tenant always comes from the
 * caller's key; arguments only narrow the tenant's own feed.
 *
 * Documented choice: a taskId or workflowId that is another tenant's gets
 * NOT_FOUND at subscribe time, exactly like an id that does not exist (same
 * code, same message), as the `task` query answers null for both. Ids are
 * minted by the server, so a real client only ever subscribes to ids it has.
 */
import { NotFoundError } from "@tasklane/core";
import type { TaskRecord, WorkflowRecord } from "@tasklane/db";
import type { TaskEventMessage } from "@tasklane/queue";
import type { Logger } from "../observability/logger.js";
import type { QueueService } from "../services/queue-service.js";
import type { TaskService } from "../services/task-service.js";
import type { WorkflowService } from "../services/workflow-service.js";
import type { TaskEventHub } from "./event-hub.js";
import { openEventStream } from "./event-stream.js";

export interface TaskUpdate {
  readonly event: TaskEventMessage;
  /** Current state, loaded after the event: it may already be past `event.to`. */
  readonly task: TaskRecord;
}

export interface TaskUpdateFilter {
  taskId: string | null;
  queueName: string | null;
}

/** The workflow seam: WorkflowService today; anything that reads one workflow of a tenant will do. */
export type WorkflowReader = Pick<WorkflowService, "get">;

export class RealtimeService {
  constructor(
    private readonly hub: TaskEventHub,
    private readonly tasks: Pick<TaskService, "get">,
    private readonly queues: Pick<QueueService, "find">,
    private readonly workflows: WorkflowReader,
    private readonly log: Logger,
  ) {}

  async taskUpdates(tenantId: string, filter: TaskUpdateFilter): Promise<AsyncIterableIterator<TaskUpdate>> {
    const { taskId } = filter;
    if (taskId !== null && (await this.tasks.get(tenantId, taskId)) === null) throw new NotFoundError("Task", taskId);
    let queueId: string | null = null;
    if (filter.queueName !== null) {
      // Resolved once: a queue keeps its id for life, and events carry the id, not the name.
      const queue = await this.queues.find(tenantId, filter.queueName);
      if (queue === null) throw new NotFoundError("Queue", filter.queueName);
      queueId = queue.id;
    }
    return openEventStream<TaskUpdate>({
      listen: (listener) => this.hub.listen(tenantId, listener),
      accept: ({ message }) => (taskId === null || message.taskId === taskId) && (queueId === null || message.queueId === queueId),
      transform: async (e) => {
        const task = await e.task();
        return task === null ? null : { event: e.message, task };
      },
      onOverflow: () => this.log.warn({ tenantId }, "taskUpdated subscriber too slow; subscription ended"),
    });
  }

  /** Emits the workflow each time one of its tasks changes status. */
  async workflowUpdates(tenantId: string, workflowId: string): Promise<AsyncIterableIterator<WorkflowRecord>> {
    if ((await this.workflows.get(tenantId, workflowId)) === null) throw new NotFoundError("Workflow", workflowId);
    return openEventStream<WorkflowRecord>({
      listen: (listener) => this.hub.listen(tenantId, listener),
      accept: ({ message }) => message.workflowId === workflowId,
      transform: () => this.workflows.get(tenantId, workflowId),
      coalesce: true,
      onOverflow: () => this.log.warn({ tenantId, workflowId }, "workflowUpdated subscriber too slow; subscription ended"),
    });
  }
}
