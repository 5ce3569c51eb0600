/** Dead-letter housekeeping beyond redrive: discarding a dead task (DEAD -> CANCELLED through the transition module). */
import { discardTask, type Database, type TaskRecord } from "@tasklane/db";

export class DeadLetterService {
  constructor(private readonly db: Database) {}

  discard(tenantId: string, id: string, actor: string): Promise<TaskRecord> {
    return discardTask(this.db, tenantId, id, actor);
  }
}
