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
