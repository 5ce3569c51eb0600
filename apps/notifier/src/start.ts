import { createLogger, listenForStopSignals, loadEnvOrExit, notifierEnvSchema, startPeriodic } from "@tasklane/config";
import { NOTIFIER_DRAIN_GRACE_MS, SHUTDOWN_DEADLINE_MS } from "@tasklane/config/shutdown-deadlines";
import {
  createDatabase,
  fanOutNotifications,
  fillDeliveryOrigins,
  listenForWakeups,
  NOTIFY_BATCH_SIZE,
  ORIGIN_FILL_BATCH,
  OUTBOX_WAKEUPS,
  prepareDatabaseOrExit,
  REDELIVERY_WAKEUP,
} from "@tasklane/db";
import { dependencyProbe, logProcessCrashes, startOpsServerOrExit, startTracing, tracingRequested } from "@tasklane/observability";
import { createDeliveryTick, REQUEST_TIMEOUT_MS } from "./delivery/delivery-loop.js";
import { InFlight } from "./delivery/in-flight.js";
import { createOutboundAgent } from "@tasklane/outbound";
import { createMetrics } from "./metrics.js";
import { startRelay } from "./relay/start-relay.js";

const env = loadEnvOrExit(notifierEnvSchema, "tasklane-notifier");
const log = createLogger("notifier", env.LOG_LEVEL);
logProcessCrashes(log);
// From here on a signal is logged and stops the notifier once it has started, closing what it opened.
const signals = listenForStopSignals(log, SHUTDOWN_DEADLINE_MS.notifier);
const tracing = await startTracing({ enabled: tracingRequested(), serviceName: "tasklane-notifier" });
await prepareDatabaseOrExit(env.DATABASE_URL, "tasklane-notifier");
const db = createDatabase({ url: env.DATABASE_URL, max: 8, applicationName: "tasklane-notifier", queryTimeoutMs: env.DATABASE_QUERY_TIMEOUT_SECONDS * 1000 });
const inFlight = new InFlight();
const metrics = createMetrics(() => inFlight.size);
const agent = createOutboundAgent(env.ALLOW_PRIVATE_TARGETS, REQUEST_TIMEOUT_MS);

const onError = (loop: string) => (error: unknown) => log.error({ err: error, loop }, "notifier loop failed; retrying");
// Both loops drain at once while batches come back full. A delivery is claimed when it is made
// (the fan-out pokes), when a slot frees up, and when a retry this notifier recorded falls due;
// the delivery poll (NOTIFIER_DELIVERY_POLL_MS; it was 100 ms, most of an idle notifier's CPU)
// only catches the rest: other notifiers' retries, a killed notifier's expired claims. Webhook
// events are fanned out when Postgres says a commit wrote some (below), and polled only as a
// fallback.
const delivery = startPeriodic(
  env.NOTIFIER_DELIVERY_POLL_MS,
  createDeliveryTick({
    db,
    agent,
    log,
    metrics,
    inFlight,
    allowPrivate: env.ALLOW_PRIVATE_TARGETS,
    retrySchedule: env.WEBHOOK_RETRY_SCHEDULE,
    concurrency: env.NOTIFIER_CONCURRENCY,
    onSlotFreed: () => delivery.poke(),
    onRetryScheduled: (delayMs) => delivery.wakeIn(delayMs),
  }),
  onError("delivery"),
);
const fanOut = startPeriodic(
  env.NOTIFIER_OUTBOX_POLL_MS,
  async () => {
    const { events, deliveries, more } = await fanOutNotifications(db, NOTIFY_BATCH_SIZE);
    metrics.events.inc(events);
    metrics.deliveriesCreated.inc(deliveries);
    // New deliveries are due now: start them without waiting for the delivery loop's next poll.
    if (deliveries > 0) delivery.poke();
    return more;
  },
  onError("fan-out"),
);
// Deliveries PENDING since before migration webhook_deliveries_origin have no origin, and the claim
// passes them over until they do: one pass at start fills them, 1,000 rows a statement so no row
// stays locked long (a no-op once done; every row written since gets its origin from a trigger).
let originCursor: string | null = "";
const originFill = startPeriodic(
  5_000,
  async () => {
    if (originCursor === null) return false;
    const { filled, lastId } = await fillDeliveryOrigins(db, originCursor);
    if (filled > 0) delivery.poke();
    originCursor = filled < ORIGIN_FILL_BATCH ? null : lastId;
    return originCursor !== null;
  },
  onError("origin fill"),
);
// A commit that wrote NOTIFY outbox rows wakes the fan-out (migration outbox_notify_wakeup):
// a webhook leaves within milliseconds of its task's end, with no 100 ms polls while idle.
// A redelivery's commit says so on the same channel (REDELIVERY_WAKEUP): its rows are due now,
// with nothing to fan out, so the delivery loop wakes instead of waiting for its next poll.
const wakeups = listenForWakeups({
  url: env.DATABASE_URL,
  channel: OUTBOX_WAKEUPS,
  onWake: (payload) => (payload === REDELIVERY_WAKEUP ? delivery.poke() : fanOut.poke()),
  onError: (error: unknown) => log.warn({ err: error }, "outbox wake-up session lost; polling until it is back"),
});

// Task events to Redis pub/sub for GraphQL subscriptions; one notifier relays, the others stand by.
const relay = startRelay(env, log, metrics.registry);

// The notifier needs only Postgres: deliveries are claimed from tables, never from Redis.
const ops = await startOpsServerOrExit("tasklane-notifier", {
  port: env.METRICS_PORT,
  host: env.METRICS_HOST,
  registry: metrics.registry,
  ready: dependencyProbe({ postgres: () => db.pool.query("SELECT 1") }),
});
log.info(
  { concurrency: env.NOTIFIER_CONCURRENCY, retrySchedule: env.WEBHOOK_RETRY_SCHEDULE, metricsPort: env.METRICS_PORT },
  "notifier started",
);

/** In-flight deliveries get this long to finish on SIGTERM; what is left keeps its lock, which runs out and lets another notifier retry. */
const SHUTDOWN_GRACE_MS = NOTIFIER_DRAIN_GRACE_MS;
let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  log.info({ signal, inFlight: inFlight.size }, "notifier draining: no new claims");
  ops?.markDraining();
  // A loop's tick or a close waiting on an unreachable Postgres would otherwise hold the process until
  // SIGKILL; exiting loses nothing, since unfinished deliveries keep claims that run out.
  setTimeout(() => {
    log.error({ inFlight: inFlight.size }, "shutdown timed out; exiting");
    process.exit(1);
  }, SHUTDOWN_DEADLINE_MS.notifier).unref();
  await Promise.all([wakeups.close(), fanOut.stop(), originFill.stop(), delivery.stop(), relay.stop()]);
  const abandoned = await inFlight.drain(SHUTDOWN_GRACE_MS);
  await ops?.close();
  // destroy, not close: close would wait for any request still hanging after the grace period.
  await agent.destroy().catch(() => undefined);
  await db.close().catch(() => undefined);
  log.info({ abandoned }, "notifier stopped");
  await tracing.shutdown().catch(() => undefined);
  process.exit(0);
}
signals.started((signal) => void shutdown(signal));
