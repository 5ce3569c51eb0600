// How long each app may take to stop on SIGTERM. Plain JavaScript beside the
// package, not in src/: scripts/start-platform.mjs imports it straight after
// `npm ci`, before anything is built, and the apps import the same numbers, so
// the platform's own deadline cannot fall below an app's again (it killed the
// worker 15 s into its 30 s drain and left its attempts RUNNING).

/**
 * Worker: in-flight PUSH attempts get this long to finish and be recorded after
 * SIGTERM, unless WORKER_DRAIN_GRACE_SECONDS says otherwise.
 */
export const WORKER_DRAIN_GRACE_MS = 30_000;

/** The worker's deadline for a drain grace: the grace, then flushing outcomes and closing connections. */
export const workerShutdownDeadlineMs = (drainGraceMs = WORKER_DRAIN_GRACE_MS) => drainGraceMs + 10_000;

/**
 * Past its deadline an app exits 1 without finishing its drain: a step waiting
 * on an unreachable Redis or Postgres would otherwise hang until SIGKILL.
 * Nothing is lost: unrecorded work keeps leases or locks that run out.
 */
export const SHUTDOWN_DEADLINE_MS = Object.freeze({
  gateway: 15_000,
  scheduler: 10_000,
  worker: workerShutdownDeadlineMs(),
  // In-flight deliveries get NOTIFIER_DRAIN_GRACE_MS, then it closes its connections.
  notifier: 25_000,
});

/** Notifier: in-flight webhook deliveries get this long to finish after SIGTERM. */
export const NOTIFIER_DRAIN_GRACE_MS = 15_000;

/**
 * `npm start` SIGKILLs an app only this long after its SIGTERM: after every
 * app's own deadline, so each app stops by itself (and says why) first.
 */
export const PLATFORM_STOP_GRACE_MS = Math.max(...Object.values(SHUTDOWN_DEADLINE_MS)) + 5_000;

/**
 * PLATFORM_STOP_GRACE_MS for the worker's drain grace `env` sets (the worker
 * refuses to start with an unreadable one, so that case keeps the default).
 */
export function platformStopGraceMs(env = process.env) {
  const seconds = Number(env.WORKER_DRAIN_GRACE_SECONDS);
  if (env.WORKER_DRAIN_GRACE_SECONDS === undefined || !Number.isFinite(seconds) || seconds < 0) return PLATFORM_STOP_GRACE_MS;
  return Math.max(PLATFORM_STOP_GRACE_MS, workerShutdownDeadlineMs(seconds * 1000) + 5_000);
}
