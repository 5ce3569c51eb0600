/**
 * Weighted fair queueing between tenants (stride scheduling). Each tenant has
 * a virtual time ("pass"); the next start goes to the tenant with work whose
 * pass is smallest, and that tenant's pass then advances by 1/weight. Over any
 * stretch where tenants stay busy, their starts are proportional to their
 * weights. A tenant that was idle rejoins at the virtual time (the smallest
 * pass among the tenants of the last pick) instead of its old pass, so it
 * cannot bank credit while idle and then monopolise the fleet with a burst.
 */
export interface FairCandidate {
  tenantId: string;
  /** Share of the fleet relative to other tenants; values < 1 count as 1. */
  weight: number;
}

export class WeightedFairPicker {
  private readonly pass = new Map<string, number>();
  /**
   * The smallest pass among the candidates of the last pick. It never goes
   * back, and a tenant busy throughout is never below it; only one that sat
   * out some picks can be, and it is lifted to it. (Lifting to the smallest
   * pass among the current candidates instead would count the sleeper's own
   * stale pass: a tenant that went quiet for a while came back owed every pick
   * it missed, and got them all in a row — whole fetch waves spent on a
   * nearly empty queue while a backlog waited.)
   */
  private virtualTime = 0;

  /** The tenant that should start next among those with runnable work, or null. */
  pick(candidates: readonly FairCandidate[]): string | null {
    if (candidates.length === 0) return null;
    const floor = this.virtualTime;
    let best: FairCandidate | null = null;
    let bestPass = Infinity;
    for (const c of candidates) {
      const p = Math.max(this.pass.get(c.tenantId) ?? 0, floor);
      this.pass.set(c.tenantId, p);
      // Ties go to the heavier tenant, then by id, so the order is deterministic.
      if (p < bestPass || (p === bestPass && best !== null && (c.weight > best.weight || (c.weight === best.weight && c.tenantId < best.tenantId)))) {
        best = c;
        bestPass = p;
      }
    }
    if (!best) return null;
    this.virtualTime = bestPass;
    this.charge(best.tenantId, best.weight);
    return best.tenantId;
  }

  /** Advances a tenant's virtual time for one start. */
  charge(tenantId: string, weight: number, starts = 1): void {
    const w = Math.max(1, weight);
    this.pass.set(tenantId, (this.pass.get(tenantId) ?? 0) + starts / w);
  }

  /** Forget a tenant that has gone idle (it rejoins at the floor). */
  forget(tenantId: string): void {
    this.pass.delete(tenantId);
  }
}

/**
 * How many tasks one start statement may take. A statement's cost is mostly
 * fixed, so bigger batches are cheaper per task, but every task of a batch
 * waits for the whole statement: a tenant trickling in tasks behind another's
 * backlog waits for a statement full of the other tenant's tasks. So the cap
 * is `alone` while a single tenant has had work (its batch delays only its own
 * tasks), and `shared` once several have within `windowMs` (a tenant that
 * trickles has work only now and then, so the window, not the instant, says
 * whether the worker is shared).
 */
export class StartBatchCap {
  private readonly lastSeen = new Map<string, number>();

  constructor(
    private readonly sizes: { alone: number; shared: number },
    private readonly windowMs: number,
  ) {}

  /** These tenants had runnable work at `now`. */
  observe(tenantIds: Iterable<string>, now: number): void {
    for (const id of tenantIds) this.lastSeen.set(id, now);
  }

  /** The cap for a batch collected at `now`. */
  at(now: number): number {
    for (const [id, seen] of this.lastSeen) if (now - seen > this.windowMs) this.lastSeen.delete(id);
    return this.lastSeen.size > 1 ? this.sizes.shared : this.sizes.alone;
  }
}
