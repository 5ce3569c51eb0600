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

/** One tenant as a worker's slot sharing sees it. */
export interface TenantSlots {
  tenantId: string;
  /** As in FairCandidate: values < 1 count as 1. */
  weight: number;
  /** Slots it holds on this worker: requests out, and jobs fetched whose start has not returned. */
  held: number;
  /** It has work the worker could start now (a ready queue). */
  waiting: boolean;
}

/**
 * A tenant's share of a worker's `capacity` slots: its weight's part of
 * `totalWeight`, the weights of every tenant holding a slot or waiting for
 * one, and at least one slot, so a tenant is never shut out however many
 * others share the worker.
 */
export function slotShare(capacity: number, weight: number, totalWeight: number): number {
  const w = Math.max(1, weight);
  // Alone, the whole worker (no rounding below it).
  if (w >= totalWeight) return capacity;
  return Math.max(1, Math.floor((capacity * w) / totalWeight));
}

/**
 * The tenants to give the worker's next starts to, one entry per start, at
 * most `n`. Requests cannot be taken back once sent, so a share that only
 * ordered who gets the next free slot would leave every slot to a tenant
 * whose slow endpoint took them all while it was alone: a tenant that
 * arrives later waited for those requests to time out. Two rules instead:
 *
 * 1. A waiting tenant holding less than its share (slotShare among the
 *    tenants holding or waiting) starts up to its share even when no slot is
 *    free: the slots another tenant holds beyond its own share are lent, and
 *    the worker runs past `capacity` until they come back. Since each share is
 *    a part of `capacity`, that is at most `capacity` more (one slot per
 *    tenant beyond that when there are more tenants than slots; the caller
 *    bounds the total).
 * 2. Free slots, once the tenants owed slots have had theirs, go to every
 *    waiting tenant in weighted fair order, its share held or not: alone, a
 *    tenant uses the whole worker, and a tenant that leaves slots unused does
 *    not keep them from another (work-conserving). A worker past `capacity`
 *    has none free, so a tenant beyond its share starts nothing until it is
 *    back within it.
 *
 * Owed tenants are picked in weighted fair order among themselves, charged to
 * the same picker.
 */
export function pickStarts(picker: WeightedFairPicker, capacity: number, tenants: readonly TenantSlots[], n: number): string[] {
  let heldTotal = 0;
  let totalWeight = 0;
  for (const t of tenants) {
    heldTotal += t.held;
    if (t.held > 0 || t.waiting) totalWeight += Math.max(1, t.weight);
  }
  const waiting: FairCandidate[] = [];
  let owed: FairCandidate[] = [];
  const owedLeft = new Map<string, number>();
  for (const t of tenants) {
    if (!t.waiting) continue;
    const candidate = { tenantId: t.tenantId, weight: t.weight };
    waiting.push(candidate);
    const deficit = slotShare(capacity, t.weight, totalWeight) - t.held;
    if (deficit > 0) {
      owed.push(candidate);
      owedLeft.set(t.tenantId, deficit);
    }
  }
  const out: string[] = [];
  while (out.length < n && owed.length > 0) {
    const tenantId = picker.pick(owed) as string;
    out.push(tenantId);
    const left = (owedLeft.get(tenantId) as number) - 1;
    owedLeft.set(tenantId, left);
    if (left === 0) owed = owed.filter((c) => c.tenantId !== tenantId);
  }
  // Owed starts are taken from the free slots first.
  let free = capacity - heldTotal - out.length;
  while (out.length < n && free > 0) {
    const tenantId = picker.pick(waiting);
    if (!tenantId) break;
    out.push(tenantId);
    free--;
  }
  return out;
}
