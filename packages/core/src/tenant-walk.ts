/**
 * Where a claim that walks tenants in id order (the notifier's deliveries,
 * the scheduler's due schedules) starts next, and whether to walk on at once.
 * A claim walks a bounded window of tenants; past it, successive claims take
 * the tenants in turn. A window with nothing to take, when tenants are left,
 * walks on at once so work further along is found without a poll's wait, but
 * only so many windows in a row: then every window was looked at and the work
 * is someone else's (another process holds it), so the caller waits.
 */
export class TenantWalk {
  /** The last tenant the previous claim walked to: where the next one starts ("" for the first). */
  after = "";
  #emptyInRow = 0;

  constructor(private readonly walkOnLimit: number) {
    if (!(Number.isInteger(walkOnLimit) && walkOnLimit > 0)) throw new RangeError(`walkOnLimit must be a positive integer, got ${walkOnLimit}`);
  }

  /**
   * Records a claim: the tenant it walked to (unchanged when undefined), and
   * whether it took nothing and stopped short of the last tenant. Answers
   * whether to claim again at once: true for such an empty window, up to
   * walkOnLimit - 1 in a row; the walkOnLimit-th answers false and starts
   * the count again.
   */
  walked(walkedTo: string | undefined, emptyWithTenantsLeft: boolean): boolean {
    if (walkedTo !== undefined) this.after = walkedTo;
    if (!emptyWithTenantsLeft) {
      this.#emptyInRow = 0;
      return false;
    }
    this.#emptyInRow = this.#emptyInRow + 1 < this.walkOnLimit ? this.#emptyInRow + 1 : 0;
    return this.#emptyInRow > 0;
  }
}
