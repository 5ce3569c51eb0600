/**
 * The platform's backlog cap (GLOBAL_MAX_PENDING_TASKS) for cron runs, as the
 * gateway's BacklogGuard applies it to submissions (core's admitToBacklog:
 * a tenant holding a heavy share is held back first, the others past a
 * margin). Runs it does not admit are recorded SKIPPED (MaterialiseOptions.backlog).
 *
 * Read lazily, at most once a second, before a batch that fires: an estimate,
 * like the gateway's, so runs may pass the cap by about a second's worth.
 * Until a read succeeds nothing is refused; a failed read keeps the last one.
 * The first failure of a streak is reported (Postgres down fails the loop
 * itself, which logs its own failure once).
 */
import { admitToBacklog, heavyTenantThreshold, type BacklogState } from "@tasklane/core";
import { platformBacklog, type Database } from "@tasklane/db";

const REFRESH_MS = 1_000;

export class ScheduleBacklog {
  #state: BacklogState | null = null;
  #readAt = -Infinity;
  #failing = false;

  constructor(
    private readonly db: Database,
    private readonly cap: number,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Reads the backlog again when the last read is a second old; a failed read keeps the last (none: admit all). */
  async refresh(): Promise<void> {
    if (performance.now() - this.#readAt < REFRESH_MS) return;
    this.#readAt = performance.now();
    try {
      const { pending, heavyTenants } = await platformBacklog(this.db.pool, heavyTenantThreshold(this.cap));
      this.#state = { pending, heavyTenants: new Set(heavyTenants) };
      this.#failing = false;
    } catch (error: unknown) {
      if (!this.#failing) this.onError(error);
      this.#failing = true;
    }
  }

  admits(tenantId: string, runs: number): boolean {
    return this.#state === null || admitToBacklog(this.#state, this.cap, tenantId, runs);
  }
}
