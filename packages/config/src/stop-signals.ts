/**
 * SIGTERM and SIGINT for an app, heard from the first line of its entry.
 * Each app used to listen only once started, so a signal during its start-up
 * (connecting, migrating, warming: a second or two, longer on a busy node; a
 * rollout or a crash-looping deploy sends them then) met Node's default and
 * ended the process with 143 and no log line, whatever it had half opened.
 * Now such a signal is logged at once and the app stops as soon as start-up is
 * done, through its ordinary shutdown: it closes what it opened and exits 0.
 * A start-up that does not finish within the deadline exits 1, as a drain past
 * its deadline does.
 */

/** The two log calls this needs (pino's Logger has them). */
export interface StopSignalLog {
  info(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

export interface StopSignals {
  /** A signal came: an app skips starting work it would only stop again (it still finishes its start-up). */
  readonly requested: boolean;
  /**
   * Start-up is done: `shutdown` runs now for a signal that came meanwhile, and
   * for every signal from now on (it must ignore repeats itself, as each app's does).
   */
  started(shutdown: (signal: NodeJS.Signals) => unknown): void;
}

const STOP_SIGNALS = ["SIGTERM", "SIGINT"] as const;

/** The first signal heard by holdStopSignals' listener, before listenForStopSignals took over. */
let heldSignal: NodeJS.Signals | undefined;
const holdSignal = (signal: NodeJS.Signals) => {
  heldSignal ??= signal;
};

/**
 * Called first thing by each app's entry (main.ts), before it loads the rest of
 * the app: loading its modules takes 0.6-2 s here, with no logger yet. A signal
 * meanwhile is kept for listenForStopSignals, which logs it and acts on it.
 */
export function holdStopSignals(): void {
  for (const signal of STOP_SIGNALS) process.on(signal, holdSignal);
}

export function listenForStopSignals(log: StopSignalLog, startupDeadlineMs: number): StopSignals {
  let received: NodeJS.Signals | undefined;
  let shutdown: ((signal: NodeJS.Signals) => unknown) | undefined;
  let deadline: ReturnType<typeof setTimeout> | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (shutdown !== undefined) {
      shutdown(signal);
      return;
    }
    if (received !== undefined) return;
    received = signal;
    log.info({ signal }, "stopping: signal received while starting; stopping once start-up is done");
    deadline = setTimeout(() => {
      log.error({ signal }, "start-up did not finish in time to stop cleanly; exiting");
      process.exit(1);
    }, startupDeadlineMs);
    // A start-up that fails exits by itself: this timer must not keep it alive.
    deadline.unref();
  };
  for (const signal of STOP_SIGNALS) {
    process.off(signal, holdSignal);
    process.on(signal, onSignal);
  }
  if (heldSignal !== undefined) onSignal(heldSignal);
  return {
    get requested() {
      return received !== undefined;
    },
    started(fn) {
      shutdown = fn;
      clearTimeout(deadline);
      if (received !== undefined) fn(received);
    },
  };
}
