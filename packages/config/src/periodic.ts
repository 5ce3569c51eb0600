/**
 * Runs `tick` repeatedly, never overlapping itself. When a tick reports that
 * it did a full batch of work, the next one starts at once (draining a
 * backlog); otherwise it waits `intervalMs`. `stop()` waits for the running tick.
 */
export interface Periodic {
  stop(): Promise<void>;
  /**
   * Runs the next tick now instead of after the interval; during a tick, right
   * after it (the running tick may have looked before what the poke announces).
   */
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
  let poked = false;
  const done = (async () => {
    while (!stopped) {
      let more = false;
      poked = false;
      try {
        more = (await tick()) === true;
      } catch (error) {
        onError(error);
      }
      if (stopped) break;
      if (!more && !poked) {
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
      poked = true;
      if (timer) clearTimeout(timer);
      wake?.();
    },
  };
}
