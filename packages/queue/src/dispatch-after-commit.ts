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
  constructor(ms: number, what = "the dispatch", fallback = "the outbox will deliver it") {
    super(`Redis did not take ${what} within ${ms} ms; ${fallback}`);
    this.name = "FastPathTimeout";
  }
}

/**
 * `work` (a Redis step a caller waits for after its commit), waited for at
 * most `waitMs`: past it this rejects with FastPathTimeout (`what` and
 * `fallback` say what was late and what makes up for it) and the work goes
 * on alone, a late failure of it swallowed (it was reported as late). The
 * one bound on every such step: the fast path below, and the gateway's pull
 * doorbells, cancel announcements and resumed queues' re-dispatch.
 */
export async function withinFastPathWait<T>(work: Promise<T>, what?: string, fallback?: string, waitMs = FAST_PATH_WAIT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new FastPathTimeout(waitMs, what, fallback)), waitMs);
  });
  try {
    return await Promise.race([work, late]);
  } catch (error) {
    work.catch(() => undefined);
    throw error;
  } finally {
    clearTimeout(timer);
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
  try {
    await withinFastPathWait(dispatcher.dispatch(intents), undefined, undefined, waitMs);
  } catch (error) {
    onError(error);
    return;
  }
  db.dispatchedOutbox.add(
    intents.flatMap((i) => (i.outboxId ? [i.outboxId] : [])),
    onError,
  );
}
