/**
 * One clock for the whole harness: Date.now() (wall clock, milliseconds).
 * Timestamps cross process boundaries (receiver, workers, Postgres's
 * completed_at), and every process here runs on the same machine, so the
 * wall clock is the one they can all agree on.
 */
export const now = (): number => Date.now();

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

/** Thrown by a waitUntil probe to stop waiting at once (the thing waited for can no longer happen). */
export class GiveUp extends Error {}

/** Polls `probe` until it returns a value other than undefined; throws after `timeoutMs`, or at once on GiveUp. */
export async function waitUntil<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs: number, everyMs = 50): Promise<T> {
  const deadline = now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error: unknown) {
      if (error instanceof GiveUp) throw error;
      lastError = error;
    }
    if (now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`, lastError === undefined ? undefined : { cause: lastError });
    }
    await sleep(everyMs);
  }
}
