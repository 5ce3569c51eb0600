/** Bounded polling: every wait in the suite has a deadline. */
export async function waitUntil<T>(what: string, probe: () => Promise<T | undefined | null | false> | T | undefined | null | false, timeoutMs: number, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v) return v;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ""}`);
    await sleep(everyMs);
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
