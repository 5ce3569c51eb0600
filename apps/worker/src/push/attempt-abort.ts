import { EventEmitter } from "node:events";

/**
 * Ends one PUSH attempt early: the task was cancelled, or its timeout came.
 * An EventEmitter with `aborted` and `reason`, which postText takes as a
 * request's signal, instead of an AbortController: the controller's
 * EventTarget cost ~10 µs of CPU per request (a local no-op endpoint, undici
 * request; the request itself was ~45 µs).
 */
export class AttemptAbort extends EventEmitter {
  aborted = false;
  reason: unknown = undefined;

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.emit("abort");
  }
}

/**
 * The abort reason of attempts a stopping worker cuts off after its drain
 * grace: handed back uncharged, not failed (the endpoint was only slower than the drain).
 */
export const WORKER_STOPPING = Symbol("worker stopping");
