/**
 * Readiness = "the dependencies this process needs answer right now".
 * Each check gets its own deadline: a client whose commands queue until the
 * server returns (ioredis with maxRetriesPerRequest: null, as BullMQ needs)
 * would otherwise hang the probe instead of failing it.
 */
export type DependencyCheck = () => Promise<unknown>;

export type DependencyState = "ok" | "down";

export interface Readiness {
  ready: boolean;
  /** Per dependency, so an operator sees which one failed (no error text: the endpoint is unauthenticated). */
  dependencies: Record<string, DependencyState>;
}

/** One second: a kubelet probe times out at 1 s by default, and a healthy Postgres or Redis answers in well under that. */
export const DEFAULT_CHECK_TIMEOUT_MS = 1_000;

async function within(ms: number, check: DependencyCheck): Promise<DependencyState> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<DependencyState>((resolve) => {
    timer = setTimeout(() => resolve("down"), ms);
  });
  try {
    return await Promise.race([check().then((): DependencyState => "ok"), timeout]);
  } catch {
    return "down";
  } finally {
    clearTimeout(timer);
  }
}

/** Runs every check in parallel; ready only when all answer in time. */
export function dependencyProbe(checks: Record<string, DependencyCheck>, timeoutMs = DEFAULT_CHECK_TIMEOUT_MS): () => Promise<Readiness> {
  return async () => {
    const names = Object.keys(checks);
    const states = await Promise.all(names.map((name) => within(timeoutMs, checks[name] as DependencyCheck)));
    const dependencies = Object.fromEntries(names.map((name, i) => [name, states[i] as DependencyState]));
    return { ready: states.every((s) => s === "ok"), dependencies };
  };
}
