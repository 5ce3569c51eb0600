/**
 * Runs `tick` repeatedly, never overlapping itself. What a tick returns says
 * when the next one runs: `true` (it did a full batch of work) at once,
 * draining a backlog; a number of milliseconds (when its next work falls due)
 * after that long, at most `intervalMs`; anything else after `intervalMs`.
 * `stop()` waits for the running tick.
 */
export interface Periodic {
  stop(): Promise<void>;
  /**
   * Runs the next tick now instead of after the interval; during a tick, right
   * after it (the running tick may have looked before what the poke announces).
   */
  poke(): void;
  /**
   * Runs a tick `ms` from now (work known to fall due then, such as a retry),
   * whatever runs before it. Wake-ups are kept per WAKE_SLOT_MS, so a burst of
   * them costs one timer per slot, not one each.
   */
  wakeIn(ms: number): void;
}

/** Wake-ups falling in one slot of this many ms share a timer (and come up to this late). */
export const WAKE_SLOT_MS = 50;

export type TickResult = boolean | number | void;

export function startPeriodic(intervalMs: number, tick: () => Promise<TickResult>, onError: (error: unknown) => void): Periodic {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let wake: (() => void) | undefined;
  let poked = false;
  const alarms = new Map<number, NodeJS.Timeout>();
  const poke = () => {
    poked = true;
    if (timer) clearTimeout(timer);
    wake?.();
  };
  const done = (async () => {
    while (!stopped) {
      let next: TickResult = false;
      poked = false;
      try {
        next = await tick();
      } catch (error) {
        onError(error);
      }
      if (stopped) break;
      if (next === true || poked) continue;
      const waitMs = typeof next === "number" ? Math.min(Math.max(0, next), intervalMs) : intervalMs;
      await new Promise<void>((resolve) => {
        wake = resolve;
        timer = setTimeout(resolve, waitMs);
      });
      wake = undefined;
    }
  })();
  return {
    async stop() {
      stopped = true;
      for (const alarm of alarms.values()) clearTimeout(alarm);
      alarms.clear();
      if (timer) clearTimeout(timer);
      wake?.();
      await done;
    },
    poke,
    wakeIn(ms: number) {
      if (stopped) return;
      const slot = Math.ceil((Date.now() + Math.max(0, ms)) / WAKE_SLOT_MS);
      if (alarms.has(slot)) return;
      const alarm = setTimeout(() => {
        alarms.delete(slot);
        poke();
      }, slot * WAKE_SLOT_MS - Date.now());
      alarm.unref();
      alarms.set(slot, alarm);
    },
  };
}
