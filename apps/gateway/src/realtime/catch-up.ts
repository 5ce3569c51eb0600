/**
 * The part of a resumed `taskUpdated(after:)` that comes from Postgres: the
 * subscription's events after the client's cursor, read back in id order
 * until the live feed can take over with nothing skipped or sent twice.
 *
 * The live feed is in id order (the relay publishes in id order, waiting at
 * holes: relay-window.ts), and a subscription hears every event published
 * after its listener is registered (event-hub.ts). The relay saves its cursor
 * only after publishing, so once the listener is registered:
 * - every id up to the relay's saved cursor is final, and is read back;
 * - the relay may have published a batch just before the listener was
 *   registered and not yet saved its cursor past it: the first cursor the
 *   relay saves after the listener was registered covers that batch, so the
 *   catch-up waits for it (or gives up after `settleWithinMs`: a relay with
 *   nothing to publish saves nothing);
 * - the first live event, L, tells the rest: every id below it is final and
 *   was published before it, so whatever of the subscription's lies between
 *   what was read back and L is read back too, and the feed goes live at L.
 * Live events at or below what was read back are dropped: they were sent.
 */
import type { HubEvent } from "./event-hub.js";

export interface CatchUpReads {
  /** The relay's saved cursor; null while no relay has started. */
  relayCursor(): Promise<bigint | null>;
  /** The subscription's events with ids in (after, through], ascending, a page; `readTo` is where the page ended. */
  page(after: bigint, through: bigint): Promise<{ events: HubEvent[]; readTo: bigint }>;
}

export interface CatchUpOptions {
  /** The client's cursor: the last event it has. */
  after: bigint;
  reads: CatchUpReads;
  /** How often the relay's cursor is read while waiting for it to move. @defaultValue 200 */
  pollMs?: number;
  /** How long to wait for the relay's cursor to move before going live without it. @defaultValue 10_000 */
  settleWithinMs?: number;
}

/** What the stream gives the catch-up: a look at its oldest live event, and a wait for one. */
export interface LiveBuffer {
  /** The id of the oldest buffered live event, after dropping those at or below `through`; undefined if none. */
  firstAfter(through: bigint): bigint | undefined;
  /** Resolves when a live event is buffered or `ms` have passed (or the stream ended). */
  wait(ms: number): Promise<void>;
}

export class CatchUp {
  readonly #reads: CatchUpReads;
  readonly #pollMs: number;
  readonly #settleWithinMs: number;
  #pending: HubEvent[] = [];
  /** Every id up to here has been read back (or is the client's own cursor). */
  #readTo: bigint;
  /** Where reading back goes to next: final ids only. */
  #target: bigint;
  /** The relay saved a cursor after the listener was registered: everything published before it is final and below it. */
  #relayMoved = false;
  /** The relay's cursor when the listener was registered. */
  #relayAtStart: bigint | null = null;
  #startedAt = 0;
  #live = false;

  constructor(opts: CatchUpOptions) {
    this.#reads = opts.reads;
    this.#pollMs = opts.pollMs ?? 200;
    this.#settleWithinMs = opts.settleWithinMs ?? 10_000;
    this.#readTo = opts.after;
    this.#target = opts.after;
  }

  /** Call once the live listener is registered. */
  async start(): Promise<void> {
    this.#startedAt = Date.now();
    const cursor = await this.#reads.relayCursor();
    this.#relayAtStart = cursor;
    if (cursor !== null && cursor > this.#target) this.#target = cursor;
  }

  /** Whether event `id` is, or will be, read back (or is the client's own): its live copy is not needed. */
  covers(id: bigint): boolean {
    return id <= this.#target;
  }

  /** Live events at or below this were sent from Postgres (or are the client's): drop them. */
  get through(): bigint {
    return this.#readTo;
  }

  /**
   * The next event read back, or undefined once the stream should go live.
   * `ended` stops the catch-up between reads (the subscriber left).
   */
  async next(live: LiveBuffer, ended: () => boolean): Promise<HubEvent | undefined> {
    while (!ended()) {
      const event = this.#pending.shift();
      if (event !== undefined) return event;
      if (this.#live) return undefined;
      if (this.#readTo < this.#target) {
        const page = await this.#reads.page(this.#readTo, this.#target);
        this.#pending = page.events;
        this.#readTo = page.readTo;
        continue;
      }
      const first = live.firstAfter(this.#readTo);
      if (first !== undefined) {
        if (first - 1n > this.#readTo) this.#target = first - 1n;
        else this.#live = true;
        continue;
      }
      if (this.#relayMoved || Date.now() - this.#startedAt >= this.#settleWithinMs) {
        this.#live = true;
        continue;
      }
      await live.wait(this.#pollMs);
      if (ended() || live.firstAfter(this.#readTo) !== undefined) continue;
      const cursor = await this.#reads.relayCursor();
      if (cursor !== null && cursor !== this.#relayAtStart) {
        if (cursor > this.#target) this.#target = cursor;
        this.#relayMoved = true;
      }
    }
    return undefined;
  }
}
