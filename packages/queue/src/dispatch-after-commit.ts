import { deleteOutboxRows, type Database, type DispatchIntent } from "@tasklane/db";
import type { TaskDispatcher } from "./task-dispatcher.js";

/**
 * The post-commit fast path: enqueue at once and drop the outbox rows. Any
 * failure is only logged; the rows stay and the scheduler's outbox
 * dispatcher delivers them (the job id makes the repeat harmless).
 */
export async function dispatchAfterCommit(
  db: Database,
  dispatcher: TaskDispatcher,
  intents: DispatchIntent[],
  onError: (error: unknown) => void,
): Promise<void> {
  if (intents.length === 0) return;
  try {
    await dispatcher.dispatch(intents);
    await deleteOutboxRows(
      db,
      intents.flatMap((i) => (i.outboxId ? [i.outboxId] : [])),
    );
  } catch (error) {
    onError(error);
  }
}
