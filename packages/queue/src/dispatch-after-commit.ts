import type { Database, DispatchIntent } from "@tasklane/db";
import type { TaskDispatcher } from "./task-dispatcher.js";

/**
 * Longest a caller waits for the fast path. The tasks are durable already and
 * their outbox rows deliver them without it; a caller held until Redis
 * answered (a submission, while Redis was down: for ever) would time out and
 * submit again, though its tasks were accepted.
 */
export const FAST_PATH_WAIT_MS = 2_000;

export class FastPathTimeout extends Error {
  constructor(ms: number) {
    super(`Redis did not take the dispatch within ${ms} ms; the outbox will deliver it`);
    this.name = "FastPathTimeout";
  }
}

/**
 * The post-commit fast path: enqueue at once, then drop the outbox rows,
 * gathered with other writes' (Database.dispatchedOutbox), so the caller does
 * not wait for that statement. Any failure is only logged; the rows stay and
 * the scheduler's outbox dispatcher delivers them (the job id makes the
 * repeat harmless). A dispatch still out after `waitMs` is left to finish on
 * its own, and its rows to the outbox too.
 */
export async function dispatchAfterCommit(
  db: Database,
  dispatcher: TaskDispatcher,
  intents: DispatchIntent[],
  onError: (error: unknown) => void,
  waitMs = FAST_PATH_WAIT_MS,
): Promise<void> {
  if (intents.length === 0) return;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new FastPathTimeout(waitMs)), waitMs);
  });
  const dispatched = dispatcher.dispatch(intents);
  try {
    await Promise.race([dispatched, late]);
  } catch (error) {
    // The dispatch may still fail after the caller has moved on: swallowed, it was reported as late.
    dispatched.catch(() => undefined);
    onError(error);
    return;
  } finally {
    clearTimeout(timer);
  }
  db.dispatchedOutbox.add(
    intents.flatMap((i) => (i.outboxId ? [i.outboxId] : [])),
    onError,
  );
}
