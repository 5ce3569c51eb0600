/**
 * What the Subscription resolvers stream. The tenant always comes from the
 * caller's key; arguments only narrow the tenant's own feed.
 *
 * Documented choice: a taskId or workflowId that is another tenant's gets
 * NOT_FOUND at subscribe time, exactly like an id that does not exist (same
 * code, same message), as the `task` query answers null for both. Ids are
 * minted by the server, so a real client only ever subscribes to ids it has.
 */
import { ErrorCode, NotFoundError, UserError } from "@tasklane/core";
import { newestTaskEventId, readRelayCursor, type Database, type TaskRecord, type WorkflowRecord } from "@tasklane/db";
import type { TaskEventMessage } from "@tasklane/queue";
import type { Logger } from "../observability/logger.js";
import type { QueueService } from "../services/queue-service.js";
import type { TaskService } from "../services/task-service.js";
import type { WorkflowService } from "../services/workflow-service.js";
import { CatchUp } from "./catch-up.js";
import type { TaskEventHub } from "./event-hub.js";
import { EventExecutions } from "./event-executions.js";
import { eventReplayReads } from "./event-replay.js";
import { openEventStream } from "./event-stream.js";
import { NextRead } from "./next-read.js";

export interface TaskUpdate {
  readonly event: TaskEventMessage;
  /** Current state, loaded after the event: it may already be past `event.to`. */
  readonly task: TaskRecord;
}

export interface TaskUpdateFilter {
  taskId: string | null;
  queueName: string | null;
  /** Resume after this event id: the feed's events after it come first, read back from Postgres. */
  after: bigint | null;
}

/**
 * How far behind the newest event, in ids, a tenant's or a queue's feed may
 * resume. Events have no index by tenant (it would cost every event an entry
 * on the hot path), so catching up walks every tenant's events since the
 * cursor: this bounds that walk (~40 reads of 5,000) per resumed subscription.
 * One task's feed reads its own events by index and has no such bound.
 */
export const RESUME_MAX_BEHIND = 200_000n;

/**
 * Catch-up pages read at once on one gateway: a tenant's or a queue's page
 * walks 5,000 ids of the whole log, so a tenant resuming many feeds at once
 * reads one page at a time and cannot hold Postgres for the others.
 */
export const REPLAY_PAGES_PER_TENANT = 1;
export const REPLAY_PAGES_PER_GATEWAY = 2;

/** The workflow seam: WorkflowService today; anything that reads one workflow of a tenant will do. */
export type WorkflowReader = Pick<WorkflowService, "get">;

export class RealtimeService {
  /** Every resumed subscription of this gateway polls the relay's cursor through this one reader. */
  readonly #relayCursor = new NextRead(() => readRelayCursor(this.db.pool));
  /** EventExecutions' fair slots, here for catch-up pages: first come first served, a tenant at its share passed by others. */
  readonly #replayPages = new EventExecutions(REPLAY_PAGES_PER_TENANT, REPLAY_PAGES_PER_GATEWAY);

  constructor(
    private readonly db: Database,
    private readonly hub: TaskEventHub,
    private readonly tasks: Pick<TaskService, "get" | "getMany">,
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
    const catchUp = filter.after === null ? undefined : await this.#catchUp(tenantId, taskId, queueId, filter.after);
    return openEventStream<TaskUpdate>({
      ...(catchUp !== undefined ? { catchUp } : {}),
      listen: (listener) => this.hub.listen(tenantId, listener),
      accept: ({ message }) => (taskId === null || message.taskId === taskId) && (queueId === null || message.queueId === queueId),
      transform: async (e) => {
        const task = await e.task();
        return task === null ? null : { event: e.message, task };
      },
      onOverflow: () => this.log.warn({ tenantId }, "taskUpdated subscriber too slow; subscription ended"),
    });
  }

  /**
   * Where a feed that follows a list read after this may start: a list, then
   * `taskUpdated(after:)` with it, misses no change (Kubernetes' list-then-watch
   * from a resourceVersion). The relay's cursor, not the newest id drawn: an
   * id below the newest may belong to a transaction that commits after the
   * list was read, which neither the list nor a feed after the newest id would
   * show; every id up to the relay's cursor is final. While no relay has ever
   * run, the newest id drawn.
   */
  async eventCursor(): Promise<string> {
    const cursor = (await this.#relayCursor.get()) ?? (await newestTaskEventId(this.db.pool));
    return cursor.toString();
  }

  async #catchUp(tenantId: string, taskId: string | null, queueId: string | null, after: bigint): Promise<CatchUp> {
    const newest = await newestTaskEventId(this.db.pool);
    if (after > newest) throw new UserError(ErrorCode.BAD_USER_INPUT, "after: no event has that id yet", { reason: "UNKNOWN_EVENT" });
    if (taskId === null && newest - after > RESUME_MAX_BEHIND) {
      throw new UserError(
        ErrorCode.BAD_USER_INPUT,
        `after: more than ${RESUME_MAX_BEHIND.toLocaleString("en-US")} events behind the newest, too far to resume a tenant's or a queue's feed; subscribe without it and read current state (tasks(filter)), or resume one task's feed`,
        { reason: "RESUME_TOO_FAR", maxBehind: Number(RESUME_MAX_BEHIND) },
      );
    }
    const reads = eventReplayReads(this.db, { tenantId, taskId, queueId }, {
      readTasks: (tenant, ids) => this.tasks.getMany(tenant, ids),
      relayCursor: () => this.#relayCursor.get(),
      pageSlot: (tenant, read) => this.#replayPages.run(tenant, read),
    });
    return new CatchUp({ after, reads });
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
