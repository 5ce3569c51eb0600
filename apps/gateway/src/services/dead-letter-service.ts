/** The dead-letter queue: listing it by time of death, and discarding dead tasks (DEAD -> CANCELLED through the transition module). */
import type { DeadLetterBatchArgs } from "@tasklane/core/schemas/dead-letter-batch";
import { listDeadTasks, discardDeadTasks, discardTask, type Database, type DeadLetterBatchResult, type Page, type TaskPage, type TaskRecord } from "@tasklane/db";

export class DeadLetterService {
  constructor(private readonly db: Database) {}

  /** The tenant's DEAD tasks (of one queue, when named), the one that died last first. */
  list(tenantId: string, queue: string | null, page: Page): Promise<TaskPage> {
    return listDeadTasks(this.db, tenantId, queue, page);
  }

  discard(tenantId: string, id: string, actor: string): Promise<TaskRecord> {
    return discardTask(this.db, tenantId, id, actor);
  }

  /**
   * Up to `max` dead tasks discarded, a statement at a time. No backlog guard:
   * CANCELLED adds nothing to the platform's pending work.
   */
  discardMany(tenantId: string, args: DeadLetterBatchArgs, actor: string): Promise<DeadLetterBatchResult> {
    return discardDeadTasks(this.db, tenantId, { queue: args.queue, max: args.max, actor });
  }
}
