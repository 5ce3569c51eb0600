/**
 * One read shared by every caller that asks while another is out: each
 * caller gets a read that *started after it asked* (never an answer read
 * before, which a caller may not use: catch-up.ts needs the relay's cursor as
 * it is once its listener is registered), and however many callers ask at
 * once there are at most two reads, one out and one waiting to go. A
 * reconnect storm of resumed subscriptions polling the relay's cursor then
 * costs Postgres a read at a time, not one per subscription.
 */
export class NextRead<T> {
  readonly #read: () => Promise<T>;
  #out: Promise<void> | null = null;
  #waiting: Promise<T> | null = null;

  constructor(read: () => Promise<T>) {
    this.#read = read;
  }

  #settled(out: Promise<void>): void {
    if (this.#out === out) this.#out = null;
  }

  get(): Promise<T> {
    if (this.#waiting !== null) return this.#waiting;
    const start = (): Promise<T> => {
      this.#waiting = null;
      const read = this.#read();
      // Settles with the read, never rejects: its failure is the callers' of that read, not the next one's.
      const out: Promise<void> = read.then(
        () => this.#settled(out),
        () => this.#settled(out),
      );
      this.#out = out;
      return read;
    };
    if (this.#out === null) return start();
    const waiting = this.#out.then(start);
    this.#waiting = waiting;
    return waiting;
  }
}
