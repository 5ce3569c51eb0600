/** How long a cancellation heard before its attempt began is kept: longer than any start statement takes. */
const KEEP_MS = 30_000;
/** Cancellations are rare; past this many the oldest go first. */
const MAX_ENTRIES = 10_000;

/**
 * Task ids whose cancellation was heard while no attempt of theirs ran here,
 * for a short while: an attempt registered after its cancel was announced
 * checks here and ends before it sends anything.
 */
export class CancelMemory {
  /** Insertion order is age order: the oldest entries come first. */
  private readonly heardAt = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  remember(taskId: string): void {
    this.prune();
    this.heardAt.delete(taskId);
    this.heardAt.set(taskId, this.now());
    if (this.heardAt.size > MAX_ENTRIES) this.heardAt.delete(this.heardAt.keys().next().value as string);
  }

  /** True (once) when the task's cancellation was heard within the last KEEP_MS. */
  take(taskId: string): boolean {
    const at = this.heardAt.get(taskId);
    if (at === undefined) return false;
    this.heardAt.delete(taskId);
    return this.now() - at <= KEEP_MS;
  }

  get size(): number {
    return this.heardAt.size;
  }

  private prune(): void {
    const cutoff = this.now() - KEEP_MS;
    for (const [taskId, at] of this.heardAt) {
      if (at >= cutoff) break;
      this.heardAt.delete(taskId);
    }
  }
}
