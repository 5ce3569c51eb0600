import type { Logger } from "pino";
import { errorChain } from "./env.js";

/** While a failure repeats, one line per this many ms, counting the repeats in between. */
export const REPEAT_LOG_INTERVAL_MS = 30_000;

/** What to log for one failure, when anything: `suppressed` repeats went unlogged since the last line. */
export interface RepeatLine {
  /** A new outage: no failure began a streak within the last interval. */
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
 *
 * A failure that flaps (fails, works, fails again within the interval) is one
 * streak, not a new outage each time: otherwise every flap logged a full
 * stack and a recovery line. Within an interval of the streak's first line, a
 * failure after a recovery is counted like a repeat, and a recovery is
 * logged only when a failure line has been since the last recovery line (or
 * an interval has passed, to report the flaps counted meanwhile).
 */
export interface RepeatThrottle {
  /** One more failure: the line to write, or undefined to stay quiet. */
  failed(): RepeatLine | undefined;
  /** A success: undefined when there is nothing to report, else the repeats suppressed since the last line. */
  recovered(): { suppressed: number } | undefined;
}

export function createRepeatThrottle(intervalMs = REPEAT_LOG_INTERVAL_MS, now: () => number = () => Date.now()): RepeatThrottle {
  /** The last line of either kind, and the last that began a streak. */
  let lastLineAt = Number.NEGATIVE_INFINITY;
  let streakAt = Number.NEGATIVE_INFINITY;
  let suppressed = 0;
  let failing = false;
  /** A failure line was written and no recovery line since. */
  let unanswered = false;
  /** A recovery happened that was not logged (a flap). */
  let recoveryOwed = false;
  const line = <T>(at: number, rest: T): T & { suppressed: number } => {
    lastLineAt = at;
    const out = { ...rest, suppressed };
    suppressed = 0;
    return out;
  };
  return {
    failed() {
      const at = now();
      const first = !failing && at - streakAt >= intervalMs;
      failing = true;
      if (!first && at - lastLineAt < intervalMs) {
        suppressed++;
        return undefined;
      }
      if (first) streakAt = at;
      unanswered = true;
      recoveryOwed = false;
      return line(at, { first });
    },
    recovered() {
      if (!failing && !recoveryOwed) return undefined;
      failing = false;
      const at = now();
      if (!unanswered && at - lastLineAt < intervalMs) {
        recoveryOwed = true;
        return undefined;
      }
      unanswered = false;
      recoveryOwed = false;
      return line(at, {});
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
      // A new outage can follow flaps counted since the last line.
      if (line.first) log[level]({ ...options.fields, err: error, ...(line.suppressed > 0 ? { suppressed: line.suppressed } : {}) }, options.failed);
      else log[level]({ ...options.fields, error: errorChain(error), repeated: true, suppressed: line.suppressed }, options.failed);
    },
    succeeded() {
      const line = throttle.recovered();
      if (line) log.info({ ...options.fields, ...(line.suppressed > 0 ? { suppressed: line.suppressed } : {}) }, options.recovered);
    },
  };
}
