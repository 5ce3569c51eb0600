import type { Logger } from "pino";
import { errorChain } from "./env.js";

/** While a failure repeats, one line per this many ms, counting the repeats in between. */
export const REPEAT_LOG_INTERVAL_MS = 30_000;

/** What to log for one failure, when anything: `suppressed` repeats went unlogged since the last line. */
export interface RepeatLine {
  /** The first failure since the last success (or ever). */
  first: boolean;
  suppressed: number;
}

/**
 * Decides which of a repeating failure's occurrences are logged: the first at
 * once, then at most one per interval with the number suppressed, and the
 * recovery once. A dependency that is down (Redis reconnecting every 100 ms-2 s,
 * Postgres failing every loop's tick) otherwise writes a line per attempt, all
 * alike, burying everything else. Shared by the Redis connection log and the
 * periodic loops' failure log, so both read the same way.
 */
export interface RepeatThrottle {
  /** One more failure: the line to write, or undefined to stay quiet. */
  failed(): RepeatLine | undefined;
  /** A success: undefined when nothing was failing, else the repeats suppressed since the last line. */
  recovered(): { suppressed: number } | undefined;
}

export function createRepeatThrottle(intervalMs = REPEAT_LOG_INTERVAL_MS, now: () => number = () => Date.now()): RepeatThrottle {
  let lastLoggedAt = Number.NEGATIVE_INFINITY;
  let suppressed = 0;
  let failing = false;
  return {
    failed() {
      const first = !failing;
      failing = true;
      const at = now();
      if (at - lastLoggedAt < intervalMs) {
        suppressed++;
        return undefined;
      }
      lastLoggedAt = at;
      const line = { first, suppressed };
      suppressed = 0;
      return line;
    },
    recovered() {
      if (!failing) return undefined;
      failing = false;
      lastLoggedAt = Number.NEGATIVE_INFINITY;
      const line = { suppressed };
      suppressed = 0;
      return line;
    },
  };
}

/** Reports a repeating failure and its end (a loop's tick, a background refresh). */
export interface FailureLog {
  failed(error: unknown): void;
  succeeded(): void;
}

export interface FailureLogOptions {
  /** On every line: which loop or session (`{ loop: "outbox" }`). */
  fields: Record<string, unknown>;
  /** The failure lines' message (unchanged from the unthrottled log, so searches for it still match). */
  failed: string;
  recovered: string;
  level?: "error" | "warn";
  intervalMs?: number;
  /** The clock (tests). */
  now?: () => number;
}

/**
 * Logs a failure that repeats through a throttle: the first with its stack
 * (`err`), later ones as one line per interval with the message chain and the
 * count suppressed (the stack is the same each time), and the recovery with
 * the count since the last line.
 */
export function createFailureLog(log: Pick<Logger, "error" | "warn" | "info">, options: FailureLogOptions): FailureLog {
  const throttle = createRepeatThrottle(options.intervalMs, options.now);
  const level = options.level ?? "error";
  return {
    failed(error) {
      const line = throttle.failed();
      if (!line) return;
      if (line.first) log[level]({ ...options.fields, err: error }, options.failed);
      else log[level]({ ...options.fields, error: errorChain(error), repeated: true, suppressed: line.suppressed }, options.failed);
    },
    succeeded() {
      const line = throttle.recovered();
      if (line) log.info({ ...options.fields, ...(line.suppressed > 0 ? { suppressed: line.suppressed } : {}) }, options.recovered);
    },
  };
}
