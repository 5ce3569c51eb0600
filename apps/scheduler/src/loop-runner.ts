import { createFailureLog, startPeriodic, type Logger, type Periodic, type TickResult } from "@tasklane/config";

/**
 * Runs one scheduler loop (startPeriodic) with its failures logged through a
 * throttle: while Postgres is down every loop fails on every tick (the lease
 * loop twice a second), and a full stack each time made ~7 identical lines a
 * second. Now: the first failure with its stack, then one line per
 * REPEAT_LOG_INTERVAL_MS counting the repeats, and one when the loop works again.
 */
export function startLoop(log: Logger, loop: string, intervalMs: number, tick: () => Promise<TickResult>): Periodic {
  const failures = createFailureLog(log, {
    fields: { loop },
    failed: "scheduler loop failed; retrying",
    recovered: "scheduler loop recovered",
  });
  return startPeriodic(
    intervalMs,
    async () => {
      const next = await tick();
      failures.succeeded();
      return next;
    },
    failures.failed,
  );
}
