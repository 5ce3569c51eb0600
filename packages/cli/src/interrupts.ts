import { TasklaneError } from "@tasklane/sdk";
import type { CliIo } from "./io.js";
import type { Progress } from "./output/progress.js";

/** What Ctrl-C asked of a command that makes calls one after another. */
export interface Interrupts {
  /** The first Ctrl-C: make no call after the one in flight. */
  stop: AbortSignal;
  /** The second: give up the call in flight too (it may still have been executed). */
  abort: AbortSignal;
  /** Ctrl-C ends the process again. */
  release(): void;
  /** Whether `error` is the call in flight given up by the second Ctrl-C (ABORTED). */
  gaveUp(error: unknown): boolean;
}

/**
 * Takes Ctrl-C over while a command makes calls one after another (submit's
 * batches, dead-letters' redrive and discard calls): the first stops after the
 * call in flight, saying so on the progress line, and a second gives that one
 * up too. The command then says how far it got and exits 130.
 */
export function catchInterrupts(io: CliIo, progress: Progress, inFlight: string): Interrupts {
  const stop = new AbortController();
  const abort = new AbortController();
  const release = io.onInterrupt(() => {
    if (stop.signal.aborted) {
      abort.abort();
      return;
    }
    stop.abort();
    progress.note(`Interrupted: stopping after the ${inFlight} in flight (Ctrl-C again to stop at once).`);
  });
  return {
    stop: stop.signal,
    abort: abort.signal,
    release,
    gaveUp: (error) => abort.signal.aborted && error instanceof TasklaneError && error.code === "ABORTED",
  };
}
