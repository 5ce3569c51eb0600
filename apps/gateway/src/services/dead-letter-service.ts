/** The dead-letter queue: listing it by time of death, and discarding a dead task (DEAD -> CANCELLED through the transition module). */
import { listDeadTasks, discardTask, type Database, type Page, type TaskPage, type TaskRecord } from "@tasklane/db";

export class DeadLetterService {
  constructor(private readonly db: Database) {}

  /** The tenant's DEAD tasks (of one queue, when named), the one that died last first. */
  list(tenantId: string, queue: string | null, page: Page): Promise<TaskPage> {
    return listDeadTasks(this.db, tenantId, queue, page);
  }

  discard(tenantId: string, id: string, actor: string): Promise<TaskRecord> {
    return discardTask(this.db, tenantId, id, actor);
  }
}
