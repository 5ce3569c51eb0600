/**
 * The gateway's start-up, run by main.ts: parse env once, bring the database up to date,
 * serve, and shut down cleanly on SIGTERM/SIGINT (exit 0).
 */
import { gatewayEnvSchema, listenForStopSignals, loadEnvOrExit } from "@tasklane/config";
import { SHUTDOWN_DEADLINE_MS } from "@tasklane/config/shutdown-deadlines";
import { prepareDatabaseOrExit } from "@tasklane/db";
import { logProcessCrashes, startTracing, tracingRequested } from "@tasklane/observability";
import { createLogger } from "./observability/logger.js";
import { createGatewayServer } from "./server.js";

/** A drain longer than this is cut short: orchestrators kill at ~30 s anyway. */
const SHUTDOWN_TIMEOUT_MS = SHUTDOWN_DEADLINE_MS.gateway;

const env = loadEnvOrExit(gatewayEnvSchema, "tasklane-gateway");
const log = createLogger(env.LOG_LEVEL);
logProcessCrashes(log);
// From here on a signal is logged and stops the gateway once it has started, closing what it opened.
const signals = listenForStopSignals(log, SHUTDOWN_TIMEOUT_MS);
const tracing = await startTracing({ enabled: tracingRequested(), serviceName: "tasklane-gateway" });

const applied = await prepareDatabaseOrExit(env.DATABASE_URL, "tasklane-gateway");
if (applied.length > 0) log.info({ migrations: applied.map((m) => m.name) }, "migrations applied");

try {
  const server = await createGatewayServer(env, { logger: log });
  if (env.ADMIN_TOKEN === undefined) {
    // Printed once, on stderr only, so it is not shipped with structured logs.
    process.stderr.write(`ADMIN_TOKEN=${server.adminToken}\n`);
    log.warn("ADMIN_TOKEN is not set: generated one for this process (printed above on stderr)");
  }

  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, "shutting down");
    const timer = setTimeout(() => {
      log.error("shutdown timed out; exiting");
      process.exit(1);
    }, SHUTDOWN_TIMEOUT_MS);
    timer.unref();
    server.close().then(
      // Buffered spans are exported before the process goes.
      () => tracing.shutdown().finally(() => process.exit(0)),
      (error: unknown) => {
        log.error({ err: error }, "error during shutdown");
        process.exit(1);
      },
    );
  };
  signals.started(stop);
} catch (error: unknown) {
  log.fatal({ err: error }, "gateway failed to start");
  process.exit(1);
}
