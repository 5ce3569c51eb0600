/**
 * Weighted fair queueing between tenants (stride scheduling). Each tenant has
 * a virtual time ("pass"); the next start goes to the tenant with work whose
 * pass is smallest, and that tenant's pass then advances by 1/weight. Over any
 * stretch where tenants stay busy, their starts are proportional to their
 * weights. A tenant that was idle rejoins at the current minimum pass instead
 * of its old one, so it cannot bank credit while idle and then monopolise the
 * fleet with a burst.
 */
export interface FairCandidate {
  tenantId: string;
  /** Share of the fleet relative to other tenants; values < 1 count as 1. */
  weight: number;
}

export class WeightedFairPicker {
  private readonly pass = new Map<string, number>();

  /** The tenant that should start next among those with runnable work, or null. */
  pick(candidates: readonly FairCandidate[]): string | null {
    if (candidates.length === 0) return null;
    let floor = Infinity;
    for (const c of candidates) {
      const p = this.pass.get(c.tenantId);
      if (p !== undefined && p < floor) floor = p;
    }
    if (floor === Infinity) floor = 0;
    let best: FairCandidate | null = null;
    let bestPass = Infinity;
    for (const c of candidates) {
      const p = Math.max(this.pass.get(c.tenantId) ?? floor, floor);
      this.pass.set(c.tenantId, p);
      // Ties go to the heavier tenant, then by id, so the order is deterministic.
      if (p < bestPass || (p === bestPass && best !== null && (c.weight > best.weight || (c.weight === best.weight && c.tenantId < best.tenantId)))) {
        best = c;
        bestPass = p;
      }
    }
    if (!best) return null;
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
