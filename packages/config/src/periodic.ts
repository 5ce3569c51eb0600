/**
 * Runs `tick` repeatedly, never overlapping itself. When a tick reports that
 * it did a full batch of work, the next one starts at once (draining a
 * backlog); otherwise it waits `intervalMs`. `stop()` waits for the running tick.
 */
export interface Periodic {
  stop(): Promise<void>;
  /** Runs the next tick now instead of after the interval. */
  poke(): void;
}

export function startPeriodic(
  intervalMs: number,
  tick: () => Promise<boolean | void>,
  onError: (error: unknown) => void,
): Periodic {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let wake: (() => void) | undefined;
  const done = (async () => {
    while (!stopped) {
      let more = false;
      try {
        more = (await tick()) === true;
      } catch (error) {
        onError(error);
      }
      if (stopped) break;
      if (!more) {
        await new Promise<void>((resolve) => {
          wake = resolve;
          timer = setTimeout(resolve, intervalMs);
        });
        wake = undefined;
      }
    }
  })();
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      wake?.();
      await done;
    },
    poke() {
      if (timer) clearTimeout(timer);
      wake?.();
    },
  };
}
