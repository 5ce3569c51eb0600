import { admitToBacklog, heavyTenantThreshold, type BacklogState } from "@tasklane/core";
import type { Queryable } from "../database.js";
import { platformBacklog } from "./pending-counters.js";

/**
 * The platform's backlog as last read, against its cap (GLOBAL_MAX_PENDING_TASKS):
 * what the gateway's submissions (BacklogGuard) and the scheduler's cron runs
 * answer to, by core's admitToBacklog (a tenant holding a heavy share is held
 * back first, the others past a margin). The owner refreshes it on a loop of
 * its own, about once a second: an estimate, so new work may pass the cap by a
 * refresh's worth. Until a read succeeds everything is admitted; a failed read
 * keeps the last one.
 */
export class PlatformBacklogReading {
  #state: BacklogState | null = null;

  constructor(
    private readonly db: Queryable,
    readonly cap: number,
  ) {}

  /** Reads the backlog again (one scan of tenant_counters); a failure throws and keeps the last reading. */
  async refresh(): Promise<void> {
    const { pending, heavyTenants } = await platformBacklog(this.db, heavyTenantThreshold(this.cap));
    this.#state = { pending, heavyTenants: new Set(heavyTenants) };
  }

  /** Whether `tenantId` may add `newTasks` to the backlog as last read. */
  admits(tenantId: string, newTasks: number): boolean {
    return this.#state === null || admitToBacklog(this.#state, this.cap, tenantId, newTasks);
  }
}
