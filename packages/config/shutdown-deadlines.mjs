// How long each app may take to stop on SIGTERM. Plain JavaScript beside the
// package, not in src/: scripts/start-platform.mjs imports it straight after
// `npm ci`, before anything is built, and the apps import the same numbers, so
// the platform's own deadline cannot fall below an app's again (it killed the
// worker 15 s into its 30 s drain and left its attempts RUNNING).

/** Worker: in-flight PUSH attempts get this long to finish and be recorded after SIGTERM. */
export const WORKER_DRAIN_GRACE_MS = 30_000;

/**
 * Past its deadline an app exits 1 without finishing its drain: a step waiting
 * on an unreachable Redis or Postgres would otherwise hang until SIGKILL.
 * Nothing is lost: unrecorded work keeps leases or locks that run out.
 */
export const SHUTDOWN_DEADLINE_MS = Object.freeze({
  gateway: 15_000,
  scheduler: 10_000,
  // The drain grace, then flushing outcomes and closing connections.
  worker: WORKER_DRAIN_GRACE_MS + 10_000,
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
