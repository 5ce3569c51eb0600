/**
 * Platform protection: when the pending tasks of all tenants together reach
 * GLOBAL_MAX_PENDING_TASKS, submissions answer OVERLOADED (HTTP 503 +
 * Retry-After) until the fleet has drained some: first those of any tenant
 * holding a heavy share of the backlog, the others only past a margin
 * (admitToBacklog), so one tenant's flood does not shut the rest out.
 *
 * Documented choice: the check reads an estimate refreshed every second (the
 * sum of tenant_counters, exact when read), not a count per submission, so it
 * costs nothing on the hot path; concurrent submissions may pass the cap by at
 * most one second's worth. Until the first read succeeds (or while Postgres
 * cannot be read) nothing is refused on its account.
 *
 * The same loop folds the per-session rows of tenant_counters and
 * queue_counters now and then, so neither table grows with every connection
 * the platform ever opened.
 */
import { OverloadedError } from "@tasklane/core";
import { startPeriodic, type Periodic } from "@tasklane/config";
import { PlatformBacklogReading, foldPendingCounters, foldQueueCounters, type Database } from "@tasklane/db";
import type { Logger } from "../observability/logger.js";

const REFRESH_MS = 1_000;
/** Fold every this many refreshes. */
const FOLD_EVERY = 30;
/** What OVERLOADED tells clients to wait: roughly what a busy fleet needs to drain a visible share. */
export const OVERLOADED_RETRY_AFTER_SECONDS = 5;

export class BacklogGuard {
  readonly #backlog: PlatformBacklogReading;
  #ticks = 0;
  #loop: Periodic | undefined;

  constructor(
    private readonly db: Database,
    maxPending: number,
    private readonly log: Logger,
  ) {
    this.#backlog = new PlatformBacklogReading(db.pool, maxPending);
  }

  start(): void {
    this.#loop ??= startPeriodic(REFRESH_MS, () => this.refresh(), (error: unknown) => this.log.warn({ err: error }, "could not read the platform backlog"));
  }

  async refresh(): Promise<void> {
    await this.#backlog.refresh();
    this.#ticks += 1;
    if (this.#ticks % FOLD_EVERY === 0) {
      await foldPendingCounters(this.db.pool);
      await foldQueueCounters(this.db.pool);
    }
  }

  /** Throws OVERLOADED when the tenant's `newTasks` more are not admitted to the platform's backlog. */
  assertAccepting(tenantId: string, newTasks: number): void {
    if (!this.#backlog.admits(tenantId, newTasks)) {
      throw new OverloadedError(OVERLOADED_RETRY_AFTER_SECONDS);
    }
  }

  async close(): Promise<void> {
    await this.#loop?.stop();
  }
}
