/**
 * The platform's backlog cap (GLOBAL_MAX_PENDING_TASKS) for cron runs, as the
 * gateway's BacklogGuard applies it to submissions (core's admitToBacklog:
 * a tenant holding a heavy share is held back first, the others past a
 * margin). Runs it does not admit are recorded SKIPPED (MaterialiseOptions.backlog).
 *
 * Read by a loop of its own once a second (the scheduler's start.ts), never by
 * the schedule loop: the read sums tenant_counters (~24 ms at 20,000 tenants),
 * which would otherwise delay the occurrences about to fire. An estimate, like
 * the gateway's, so runs may pass the cap by about a second's worth. Until a
 * read succeeds nothing is refused; a failed read keeps the last one.
 */
import { admitToBacklog, heavyTenantThreshold, type BacklogState } from "@tasklane/core";
import { platformBacklog, type Database } from "@tasklane/db";

export class ScheduleBacklog {
  #state: BacklogState | null = null;

  constructor(
    private readonly db: Database,
    private readonly cap: number,
  ) {}

  /** Reads the backlog again; a failure throws and keeps the last read (none: admit all). */
  async refresh(): Promise<void> {
    const { pending, heavyTenants } = await platformBacklog(this.db.pool, heavyTenantThreshold(this.cap));
    this.#state = { pending, heavyTenants: new Set(heavyTenants) };
  }

  admits(tenantId: string, runs: number): boolean {
    return this.#state === null || admitToBacklog(this.#state, this.cap, tenantId, runs);
  }
}
