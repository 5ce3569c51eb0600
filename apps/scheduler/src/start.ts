import { createFailureLog, createLogger, listenForStopSignals, loadEnvOrExit, schedulerEnvSchema } from "@tasklane/config";
import { SHUTDOWN_DEADLINE_MS } from "@tasklane/config/shutdown-deadlines";
import { PlatformBacklogReading, SCHEDULE_WAKEUPS, createDatabase, listenForWakeups, prepareDatabaseOrExit } from "@tasklane/db";
import { dependencyProbe, logProcessCrashes, startOpsServerOrExit, startTracing, tracingRequested } from "@tasklane/observability";
import { createKeySpace, createRedis, createTaskDispatcher, pingIfConnected, redisTargetOf } from "@tasklane/queue";
import type { SchedulerContext } from "./context.js";
import { expireStaleLeases } from "./loops/lease-expiry.js";
import { promoteIntoHorizon } from "./loops/horizon-promotion.js";
import { dispatchOutbox } from "./loops/outbox-dispatch.js";
import { createReconciler } from "./loops/reconciler.js";
import { SCHEDULE_IDLE_MAX_MS, SCHEDULE_POLL_MS, createScheduleFiring } from "./loops/schedule-firing.js";
import { createPriorityAging } from "./loops/priority-aging.js";
import { promoteDueStatuses } from "./loops/status-promotion.js";
import { QUEUE_DEPTH_INTERVAL_MS, measureQueueDepth } from "./loops/queue-depth.js";
import { pruneExpiredTasks } from "./loops/retention.js";
import { createSchedulerMetrics } from "./metrics.js";
import { startLoop } from "./loop-runner.js";

const env = loadEnvOrExit(schedulerEnvSchema, "tasklane-scheduler");
const log = createLogger("scheduler", env.LOG_LEVEL);
logProcessCrashes(log);
// From here on a signal is logged and stops the scheduler once it has started, closing what it opened.
const signals = listenForStopSignals(log, SHUTDOWN_DEADLINE_MS.scheduler);
const tracing = await startTracing({ enabled: tracingRequested(), serviceName: "tasklane-scheduler" });
await prepareDatabaseOrExit(env.DATABASE_URL, "tasklane-scheduler");
const db = createDatabase({ url: env.DATABASE_URL, max: 6, applicationName: "tasklane-scheduler", queryTimeoutMs: env.DATABASE_QUERY_TIMEOUT_SECONDS * 1000 });
const redis = createRedis(redisTargetOf(env), "tasklane-scheduler", { log });
const keys = createKeySpace(env.REDIS_KEY_PREFIX);
const ctx: SchedulerContext = {
  env,
  db,
  redis,
  keys,
  dispatcher: createTaskDispatcher(redis, keys),
  log,
  horizonMs: env.DISPATCH_HORIZON_SECONDS * 1000,
  metrics: createSchedulerMetrics(env.METRICS_TENANT_LABELS),
};

const aging = createPriorityAging(ctx);
// A commit that wrote schedules (migration schedule_notify_wakeup) wakes the schedule loop, which
// otherwise sleeps until the next occurrence falls due (it looked ten times a second).
// It retries every second while Postgres is down: throttled like the loops.
const wakeupFailures = createFailureLog(log, {
  fields: { session: "schedule-wakeups" },
  level: "warn",
  failed: "schedule wake-up session lost; polling until it is back",
  recovered: "schedule wake-up session restored",
});
const scheduleWakeups = listenForWakeups({
  url: env.DATABASE_URL,
  channel: SCHEDULE_WAKEUPS,
  // Also called once each time the session (re)connects.
  onWake: () => {
    wakeupFailures.succeeded();
    schedules.poke();
  },
  onError: wakeupFailures.failed,
});
// Cron runs answer to the platform's backlog cap, read once a second by its own loop (off the firing path).
const backlog = new PlatformBacklogReading(db.pool, env.GLOBAL_MAX_PENDING_TASKS);
const fireSchedules = createScheduleFiring(ctx, backlog);
const schedules = startLoop(log, "schedules", SCHEDULE_IDLE_MAX_MS, () =>
  fireSchedules(scheduleWakeups.listening ? SCHEDULE_IDLE_MAX_MS : SCHEDULE_POLL_MS),
);
const loops = [
  schedules,
  startLoop(log, "backlog", 1000, () => backlog.refresh()),
  // The outbox is a safety net (rows younger than its 2 s grace are the fast path's): once a second
  // brings what a fast path lost to Redis 2-3 s after its commit.
  startLoop(log, "outbox", 1000, () => dispatchOutbox(ctx)),
  startLoop(log, "horizon", 1000, () => promoteIntoHorizon(ctx)),
  // Reporting only (workers start due tasks without it): a second after the 1 s grace is soon enough.
  startLoop(log, "status", 1000, () => promoteDueStatuses(ctx)),
  startLoop(log, "leases", 500, () => expireStaleLeases(ctx)),
  startLoop(log, "reconciler", 1000, createReconciler(ctx)),
  startLoop(log, "aging", 1000, () => aging.tick()),
  startLoop(log, "queue-depth", QUEUE_DEPTH_INTERVAL_MS, () => measureQueueDepth(ctx)),
  startLoop(log, "retention", env.RETENTION_PRUNE_INTERVAL_SECONDS * 1000, () => pruneExpiredTasks(ctx)),
];
const ops = await startOpsServerOrExit("tasklane-scheduler", {
  port: env.METRICS_PORT,
  host: env.METRICS_HOST,
  registry: ctx.metrics.registry,
  ready: dependencyProbe({ postgres: () => db.pool.query("SELECT 1"), redis: () => pingIfConnected(redis) }),
});
log.info({ horizonSeconds: env.DISPATCH_HORIZON_SECONDS, retentionDays: env.TASK_RETENTION_DAYS, metricsPort: ops?.port, tracing: tracing.enabled }, "scheduler started");

/**
 * A tick waiting on an unreachable Redis never ends (its commands queue until Redis returns), so the drain
 * has a deadline; exiting then loses nothing: every loop's work is transactional and is redone by the next scheduler.
 */
const SHUTDOWN_TIMEOUT_MS = SHUTDOWN_DEADLINE_MS.scheduler;
let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  log.info({ signal }, "scheduler draining");
  ops?.markDraining();
  setTimeout(() => {
    log.error("shutdown timed out; exiting");
    process.exit(1);
  }, SHUTDOWN_TIMEOUT_MS).unref();
  await Promise.all([scheduleWakeups.close(), ...loops.map((l) => l.stop())]);
  await aging.close();
  redis.disconnect();
  await db.close();
  await ops?.close();
  await tracing.shutdown().catch(() => undefined);
  process.exit(0);
}
signals.started((signal) => void shutdown(signal));
