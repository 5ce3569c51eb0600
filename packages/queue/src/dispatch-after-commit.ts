import type { Database, DispatchIntent } from "@tasklane/db";
import type { TaskDispatcher } from "./task-dispatcher.js";

/**
 * The post-commit fast path: enqueue at once, then drop the outbox rows,
 * gathered with other writes' (Database.dispatchedOutbox), so the caller does
 * not wait for that statement. Any failure is only logged; the rows stay and
 * the scheduler's outbox dispatcher delivers them (the job id makes the
 * repeat harmless).
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
  } catch (error) {
    onError(error);
    return;
  }
  db.dispatchedOutbox.add(
    intents.flatMap((i) => (i.outboxId ? [i.outboxId] : [])),
    onError,
  );
}
