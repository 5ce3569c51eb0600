/**
 * A GraphQL subscription's source stream over hub events: filters, then turns
 * each accepted event into a value with an async step (loading the task or
 * workflow) strictly one at a time, so values leave in the order events came.
 *
 * A hand-written iterator rather than an async generator: graphql-ws calls
 * return() when the client unsubscribes or disconnects, and a generator
 * parked in an `await` would not see that until the next event arrived,
 * leaking the listener meanwhile.
 */
import { ErrorCode, UserError } from "@tasklane/core";
import type { CatchUp, LiveBuffer } from "./catch-up.js";
import type { HubEvent, HubListener } from "./event-hub.js";

/**
 * How a stream that gave up on a slow subscriber ends: with an error, so the
 * client can tell it missed events (a plain `complete` read like the end of
 * the feed). OVERLOADED because the server shed load it would not hold;
 * `reason` tells it apart from a gateway refusing work.
 */
export class SlowConsumerError extends UserError {
  constructor(maxBuffered: number) {
    super(
      ErrorCode.OVERLOADED,
      `Subscription ended: the subscriber fell ${maxBuffered} events behind and later events were dropped; subscribe again, then read current state to catch up`,
      { retryAfterSeconds: 1, reason: "SLOW_CONSUMER", maxBuffered },
    );
  }
}

export interface EventStreamOptions<T> {
  /** Registers the listener with the hub; resolves to the function that removes it. */
  listen(listener: HubListener): Promise<() => void>;
  accept(event: HubEvent): boolean;
  /** Per accepted event, in order; null skips the event. */
  transform(event: HubEvent): Promise<T | null>;
  /**
   * Accepted events waiting for a slow client before the stream gives up on it
   * (ends with a SlowConsumerError; the client may resubscribe and read current
   * state). Bounds memory.
   * @defaultValue 10000
   */
  maxBuffered?: number;
  /**
   * When the value depends only on current state (a workflow), events that
   * queued up behind a slow transform collapse into the newest one.
   * @defaultValue false
   */
  coalesce?: boolean;
  onOverflow?(): void;
  /**
   * A resumed subscription's events from Postgres, sent before the live ones
   * (catch-up.ts); started once the listener is registered. Live events it
   * has sent are dropped.
   */
  catchUp?: CatchUp;
}

export async function openEventStream<T>(opts: EventStreamOptions<T>): Promise<AsyncIterableIterator<T>> {
  const maxBuffered = opts.maxBuffered ?? 10_000;
  const buffer: HubEvent[] = [];
  let done = false;
  /** Set when the stream gave up on its subscriber: the next read ends it with this. */
  let failure: SlowConsumerError | undefined;
  let wake: (() => void) | undefined;
  const signal = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };

  let unlisten: () => void = () => undefined;
  const finish = () => {
    if (done) return;
    done = true;
    buffer.length = 0;
    unlisten();
    signal();
  };

  let catchUp = opts.catchUp;
  unlisten = await opts.listen((event) => {
    if (done || !opts.accept(event)) return;
    // Read back from Postgres anyway: kept out of the buffer, where a long catch-up's repeats would fill it.
    if (catchUp !== undefined && catchUp.covers(BigInt(event.message.eventId))) return;
    if (buffer.length >= maxBuffered) {
      opts.onOverflow?.();
      failure = new SlowConsumerError(maxBuffered);
      finish();
      return;
    }
    buffer.push(event);
    signal();
  });

  /** Set once a catch-up has handed over: live events at or below it were sent from Postgres. */
  let sentThrough: bigint | undefined;
  const live: LiveBuffer = {
    firstAfter(through) {
      while (buffer.length > 0 && BigInt((buffer[0] as HubEvent).message.eventId) <= through) buffer.shift();
      const first = buffer[0];
      return first === undefined ? undefined : BigInt(first.message.eventId);
    },
    wait: (ms) =>
      new Promise<void>((resolve) => {
        if (done || buffer.length > 0) return resolve();
        const timer = setTimeout(() => {
          if (wake === woken) wake = undefined;
          resolve();
        }, ms);
        const woken = () => {
          clearTimeout(timer);
          resolve();
        };
        wake = woken;
      }),
  };
  if (catchUp !== undefined) {
    try {
      await catchUp.start();
    } catch (error: unknown) {
      finish();
      throw error;
    }
  }

  const end: IteratorReturnResult<undefined> = { done: true, value: undefined };
  const iterator: AsyncIterableIterator<T> = {
    async next(): Promise<IteratorResult<T>> {
      while (!done) {
        let event: HubEvent | undefined;
        if (catchUp !== undefined) {
          try {
            event = await catchUp.next(live, () => done);
          } catch (error: unknown) {
            finish();
            throw error;
          }
          if (event === undefined) {
            sentThrough = catchUp.through;
            catchUp = undefined;
            continue;
          }
        } else {
          event = opts.coalesce === true ? buffer.splice(0).at(-1) : buffer.shift();
          if (event === undefined) {
            await new Promise<void>((resolve) => {
              wake = resolve;
            });
            continue;
          }
          if (sentThrough !== undefined && BigInt(event.message.eventId) <= sentThrough) continue;
        }
        let value: T | null;
        try {
          value = await opts.transform(event);
        } catch (error: unknown) {
          // The subscription ends with the error (graphql-ws sends it to the client); the listener must go too.
          finish();
          throw error;
        }
        if (value !== null && !done) return { done: false, value };
      }
      if (failure !== undefined) {
        const error = failure;
        failure = undefined;
        // graphql-ws ends the operation with an `error` message carrying it (code OVERLOADED).
        throw error;
      }
      return end;
    },
    async return(): Promise<IteratorResult<T>> {
      finish();
      return end;
    },
    async throw(error: unknown): Promise<IteratorResult<T>> {
      finish();
      throw error;
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };
  return iterator;
}
