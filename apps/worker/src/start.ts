import { hostname } from "node:os";
import { createFailureLog, createLogger, listenForStopSignals, loadEnvOrExit, workerEnvSchema } from "@tasklane/config";
import { workerShutdownDeadlineMs } from "@tasklane/config/shutdown-deadlines";
import { ServerClock } from "@tasklane/core/server-clock";
import { createDatabase, prepareDatabaseOrExit, type DispatchIntent } from "@tasklane/db";
import { dependencyProbe, logProcessCrashes, startOpsServerOrExit, startTracing, tracingRequested } from "@tasklane/observability";
import { createKeySpace, createRedis, createTaskDispatcher, dispatchAfterCommit, parseDoorbell, pingIfConnected, redisTargetOf, untilUnreachable } from "@tasklane/queue";
import { CompletionBatcher, OutcomeNotRecorded } from "./completion-batcher.js";
import type { WorkerContext } from "./context.js";
import { FairFetcher } from "./fetch/fair-fetcher.js";
import { QueueDirectory } from "./fetch/queue-directory.js";
import { createWorkerMetrics } from "./metrics.js";
import { AttemptAbort, WORKER_STOPPING } from "./push/attempt-abort.js";
import { CancelMemory } from "./push/cancel-memory.js";
import { createOutboundAgent } from "@tasklane/outbound";
import { runAttempt } from "./task-runner.js";

const env = loadEnvOrExit(workerEnvSchema, "tasklane-worker");
const workerId = env.WORKER_ID ?? `${hostname()}-${process.pid}`;
const log = createLogger("worker", env.LOG_LEVEL).child({ workerId });
logProcessCrashes(log);
const GRACE_MS = env.WORKER_DRAIN_GRACE_SECONDS * 1000;
/**
 * Past this the process exits 1 without finishing its drain: a step waiting on an unreachable Redis or
 * Postgres would otherwise hang until SIGKILL. Nothing is lost: unrecorded attempts keep leases that expire.
 */
const SHUTDOWN_TIMEOUT_MS = workerShutdownDeadlineMs(GRACE_MS);
// From here on a signal is logged and stops the worker once it has started, closing what it opened.
const signals = listenForStopSignals(log, SHUTDOWN_TIMEOUT_MS);
const tracing = await startTracing({ enabled: tracingRequested(), serviceName: "tasklane-worker" });
await prepareDatabaseOrExit(env.DATABASE_URL, "tasklane-worker");
const db = createDatabase({ url: env.DATABASE_URL, max: 10, applicationName: "tasklane-worker", queryTimeoutMs: env.DATABASE_QUERY_TIMEOUT_SECONDS * 1000 });
const redis = createRedis(redisTargetOf(env), "tasklane-worker", { log });
const subscriber = createRedis(redisTargetOf(env), "tasklane-worker-sub", { log });
const keys = createKeySpace(env.REDIS_KEY_PREFIX);
// Refreshed every second: while Postgres is down, one line per interval rather than one a second.
const directoryFailures = createFailureLog(log, { fields: { loop: "queue-directory" }, level: "warn", failed: "queue directory refresh failed", recovered: "queue directory refresh recovered" });
// Its own log: sharing the refresh's, a LISTEN session failing while refreshes worked was "first" (full stack) and "recovered" every second.
const rotationListenFailures = createFailureLog(log, {
  fields: { session: "secret-rotations" },
  level: "warn",
  failed: "signing-secret rotation session lost; reloading every second until it is back",
  recovered: "signing-secret rotation session restored",
});
const directory = new QueueDirectory(db, directoryFailures.failed, directoryFailures.succeeded, rotationListenFailures);
await directory.start();

const dispatcher = createTaskDispatcher(redis, keys);
const horizonMs = env.DISPATCH_HORIZON_SECONDS * 1000;
const fastDispatch = (intents: DispatchIntent[]) =>
  dispatchAfterCommit(db, dispatcher, intents, (error) => log.warn({ err: error }, "fast dispatch failed; outbox will retry"));
const completions = new CompletionBatcher(db, `worker:${workerId}`, fastDispatch, horizonMs, undefined, undefined, {
  unavailableLog: createFailureLog(log, {
    fields: { loop: "completions" },
    level: "warn",
    failed: "could not record outcomes: Postgres unreachable; holding them and trying again while their leases last",
    recovered: "recording outcomes again",
  }),
  droppedLog: createFailureLog(log, {
    fields: { loop: "completions" },
    level: "error",
    failed: "dropped held outcomes; their tasks run again when their leases run out",
    recovered: "no more held outcomes dropped",
  }),
});
const ctx: WorkerContext = {
  env,
  workerId,
  db,
  redis,
  keys,
  dispatcher,
  directory,
  completions,
  agent: createOutboundAgent(env.ALLOW_PRIVATE_TARGETS, 10_000, 256),
  log,
  horizonMs,
  serverClock: new ServerClock(),
  metrics: createWorkerMetrics(() => completions.heldCount),
};

let stopping = false;

/** Attempts in flight, by task id, so a cancellation can abort the request. */
const inFlight = new Map<string, AttemptAbort>();
/**
 * Cancellations heard for tasks with no attempt here yet: the cancel can land
 * between the start statement's commit and the attempt's registration, and a
 * task started ahead of its runAt would otherwise still be sent at runAt.
 */
const recentCancels = new CancelMemory();
const fetcher = new FairFetcher(ctx, async (started, executed) => {
  const abort = new AttemptAbort();
  inFlight.set(started.task.id, abort);
  if (recentCancels.take(started.task.id)) abort.abort(new Error("cancelled"));
  ctx.metrics.starts.inc();
  ctx.metrics.inFlight.inc();
  // Both instants come from Postgres (one clock); a lease expiry restart has runAt = its requeue time.
  ctx.metrics.startDelay.observe(Math.max(0, (started.task.startedAt ?? new Date()).getTime() - started.task.runAt.getTime()) / 1000);
  try {
    await runAttempt(ctx, started, abort, executed);
  } catch (error) {
    // The outcome could not be recorded: the lease will expire and the task runs again. An outcome
    // held for Postgres and given up on was logged by the batcher, once per interval for all of them.
    if (error instanceof OutcomeNotRecorded) return;
    log.error({ err: error, taskId: started.task.id, tenantId: started.task.tenantId, queueId: started.task.queueId, attempt: started.task.attempts }, "could not record attempt outcome");
  } finally {
    inFlight.delete(started.task.id);
    ctx.metrics.inFlight.dec();
  }
});

// Not awaited: with Redis unreachable the reply waits for it, and the worker must still serve
// /livez and /readyz (503) and drain on SIGTERM meanwhile. ioredis sends the queued SUBSCRIBE once
// connected, and again after every reconnect; until then the fetcher finds work by polling.
subscriber.subscribe(keys.doorbellChannel, keys.cancelChannel).catch((error: unknown) => {
  if (!stopping) log.error({ err: error }, "could not subscribe to the doorbell and cancel channels");
});
subscriber.on("message", (channel: string, message: string) => {
  if (channel === keys.doorbellChannel) {
    const { queueName, dueAt } = parseDoorbell(message);
    fetcher.ring(queueName, dueAt);
  } else if (channel === keys.cancelChannel) {
    const attempt = inFlight.get(message);
    if (attempt) attempt.abort(new Error("cancelled"));
    else recentCancels.remember(message);
  }
});
// Stopped while starting: no attempt is begun only to be drained at once.
if (!signals.requested) fetcher.start();
const ops = await startOpsServerOrExit("tasklane-worker", {
  port: env.METRICS_PORT,
  host: env.METRICS_HOST,
  registry: ctx.metrics.registry,
  ready: dependencyProbe({ postgres: () => db.pool.query("SELECT 1"), redis: () => pingIfConnected(redis) }),
});
log.info({ concurrency: env.WORKER_CONCURRENCY, metricsPort: ops?.port, tracing: tracing.enabled }, "worker started");

/** After the grace, how long the attempts cut off get to be handed back: one statement each, well inside the deadline. */
const HAND_BACK_MS = 5_000;
/** Left of the deadline, after held outcomes' last chance, for stopping the directory and closing connections. */
const DRAIN_CLOSE_MS = 2_000;

async function untilIdle(deadline: number): Promise<void> {
  while (fetcher.running > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
}

async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  const stopDeadline = performance.now() + SHUTDOWN_TIMEOUT_MS;
  log.info({ signal, inFlight: fetcher.running }, "worker draining: no new fetches");
  ops?.markDraining();
  setTimeout(() => {
    log.error({ inFlight: fetcher.running }, "shutdown timed out; exiting");
    process.exit(1);
  }, SHUTDOWN_TIMEOUT_MS).unref();
  // With Redis unreachable the fetch loop waits for a reply that only comes with Redis, so the drain goes
  // on without it (in-flight attempts still get their grace). A take whose reply is lost started nothing
  // in Postgres: its tasks are still QUEUED there and the reconciler's sweep puts them back.
  await Promise.race([fetcher.stop(), untilUnreachable(redis)]);
  // In-flight attempts get a grace period. What still runs after it was cut off by this stop, not failed
  // by its endpoint: each request is aborted as WORKER_STOPPING and its task handed back uncharged and
  // dispatched again (runAttempt), for another worker to run at once. Cut off without that, the request
  // failed as a network error and used up an attempt of a healthy endpoint (DEAD with maxAttempts 1) on
  // every deploy. An attempt whose hand-back cannot be recorded (Postgres gone) keeps its lease, which expires.
  await untilIdle(Date.now() + GRACE_MS);
  if (fetcher.running > 0) {
    log.info({ inFlight: fetcher.running }, "drain grace over: handing back the attempts still in flight");
    for (const attempt of inFlight.values()) attempt.abort(WORKER_STOPPING);
    await untilIdle(Date.now() + HAND_BACK_MS);
  }
  // Outcomes held while Postgres was unreachable get until shortly before the deadline (closing takes the rest).
  const held = ctx.completions.heldCount;
  if (held > 0) log.info({ held }, "recording held outcomes before stopping");
  await ctx.completions.drain(stopDeadline - DRAIN_CLOSE_MS);
  // Before db.close(): a reload still running would fail against the closed pool and log it.
  await directory.stop();
  subscriber.disconnect();
  redis.disconnect();
  // close() would wait for requests abandoned after the grace period; destroy() cuts them.
  await (fetcher.running > 0 ? ctx.agent.destroy() : ctx.agent.close());
  await db.close();
  log.info({ abandoned: fetcher.running }, "worker stopped");
  await tracing.shutdown().catch(() => undefined);
  await ops?.close();
  process.exit(0);
}
signals.started((signal) => void shutdown(signal));
