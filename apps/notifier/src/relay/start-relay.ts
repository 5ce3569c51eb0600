/** Wires the event relay for main.ts: its own Redis connection, metrics, and a stop that closes both. */
import type { Logger, NotifierEnv } from "@tasklane/config";
import { createKeySpace, createRedis, redisTargetOf } from "@tasklane/queue";
import type { Registry } from "prom-client";
import { startEventRelay } from "./event-relay.js";
import { createRelayMetrics } from "./relay-metrics.js";

export function startRelay(env: NotifierEnv, log: Logger, registry: Registry): { stop(): Promise<void> } {
  // Fail a publish after a couple of reconnect attempts instead of queueing it forever:
  // the relay then drops its lock and retries, and shutdown is never stuck behind Redis.
  const redis = createRedis(redisTargetOf(env), "tasklane-event-relay", { log, redis: { maxRetriesPerRequest: 2 } });
  // A subscriber connection takes no other commands: its own, for new-listener announcements.
  const wakeups = createRedis(redisTargetOf(env), "tasklane-event-relay-wakeups", { log });
  const relay = startEventRelay({
    databaseUrl: env.DATABASE_URL,
    redis,
    wakeups,
    keys: createKeySpace(env.REDIS_KEY_PREFIX),
    log: log.child({ loop: "event-relay" }),
    metrics: createRelayMetrics(registry),
  });
  return {
    async stop() {
      await relay.stop();
      redis.disconnect();
      wakeups.disconnect();
    },
  };
}
