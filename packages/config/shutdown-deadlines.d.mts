/** Worker: in-flight PUSH attempts get this long to finish and be recorded after SIGTERM, unless WORKER_DRAIN_GRACE_SECONDS says otherwise. */
export declare const WORKER_DRAIN_GRACE_MS: number;
/** The worker's deadline for a drain grace: the grace, then flushing outcomes and closing connections. */
export declare function workerShutdownDeadlineMs(drainGraceMs?: number): number;
/** Notifier: in-flight webhook deliveries get this long to finish after SIGTERM. */
export declare const NOTIFIER_DRAIN_GRACE_MS: number;
/** Per app: past this after SIGTERM it exits 1 without finishing its drain. */
export declare const SHUTDOWN_DEADLINE_MS: Readonly<{ gateway: number; scheduler: number; worker: number; notifier: number }>;
/** `npm start` SIGKILLs an app only this long after its SIGTERM (after every app's own deadline). */
export declare const PLATFORM_STOP_GRACE_MS: number;
/** PLATFORM_STOP_GRACE_MS for the worker's drain grace `env` sets (WORKER_DRAIN_GRACE_SECONDS). */
export declare function platformStopGraceMs(env?: Record<string, string | undefined>): number;
