/**
 * An unordered collection for members that come and go many times a second
 * for as long as the process lives, such as the tasks a worker is running.
 *
 * Why not a Set or a Map: V8 keeps their entries in a hash table that it
 * replaces whenever the collection grows, shrinks or fills up with deleted
 * entries, and the retired table keeps the entries it held (and a pointer to
 * its successor) for iterators still walking it. A long-lived collection's
 * tables live in the old generation, so a retired one keeps the members it held
 * at that moment, and through its successor every later table and theirs,
 * reachable until the next full collection: the young generation's collections
 * copy and promote members long gone. Under a churn of about a thousand
 * members a second, that made the SDK Worker's young-generation collections
 * keep a fifth of all it allocated (test/bench/findings.md). An array whose
 * slot is cleared as its member leaves keeps nothing of it.
 */
export class Roster<T> {
  #entries: RosterEntry<T>[] = [];

  get size(): number {
    return this.#entries.length;
  }

  /** Adds `value` and returns its removal, which is safe to call more than once. */
  add(value: T): () => void {
    const entry: RosterEntry<T> = { value, index: this.#entries.length };
    this.#entries.push(entry);
    return () => this.#remove(entry);
  }

  /** The members now, in no particular order. */
  values(): T[] {
    return this.#entries.map((entry) => entry.value);
  }

  #remove(entry: RosterEntry<T>): void {
    if (entry.index < 0) return;
    // The last entry takes the leaver's slot: pop() clears the array's last slot, so the
    // array never points at a member that left.
    const last = this.#entries.pop() as RosterEntry<T>;
    if (last !== entry) {
      this.#entries[entry.index] = last;
      last.index = entry.index;
    }
    entry.index = -1;
  }
}

interface RosterEntry<T> {
  readonly value: T;
  /** Where the entry sits in the array; -1 once removed. */
  index: number;
}
