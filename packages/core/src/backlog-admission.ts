/**
 * Who may still submit once the platform's backlog reaches its cap
 * (GLOBAL_MAX_PENDING_TASKS). Refusing everyone at the cap let one tenant's
 * flood shut every other tenant out: a tenant holding a large share of the
 * backlog is the one refused, and the others keep a margin above the cap.
 * Without such a tenant (many tenants each holding a little) the cap refuses
 * everyone, as the platform's own protection must.
 */

/** A tenant holding at least this share of the cap is refused first once the cap is reached. */
export const BACKLOG_HEAVY_SHARE = 0.1;
/** How far past the cap the other tenants may go while a heavy tenant is held back. */
export const BACKLOG_CEILING = 1.1;

export interface BacklogState {
  /** Pending tasks of all tenants, as last read. */
  pending: number;
  /** Tenants holding at least BACKLOG_HEAVY_SHARE of the cap, as last read. */
  heavyTenants: ReadonlySet<string>;
}

/** Whether `tenantId` may add `newTasks` to a backlog in `state` under `cap`. */
export function admitToBacklog(state: BacklogState, cap: number, tenantId: string, newTasks: number): boolean {
  const after = state.pending + newTasks;
  if (after <= cap) return true;
  if (state.heavyTenants.size === 0 || state.heavyTenants.has(tenantId)) return false;
  return after <= Math.floor(cap * BACKLOG_CEILING);
}

/** The pending count from which a tenant counts as heavy under `cap`. */
export const heavyTenantThreshold = (cap: number) => Math.max(1, Math.ceil(cap * BACKLOG_HEAVY_SHARE));
