import type { Logger, SchedulerEnv } from "@tasklane/config";
import type { Database } from "@tasklane/db";
import type { KeySpace, TaskDispatcher, RedisClient } from "@tasklane/queue";
import type { SchedulerMetrics } from "./metrics.js";

/** What every scheduler loop shares. */
export interface SchedulerContext {
  env: SchedulerEnv;
  db: Database;
  redis: RedisClient;
  keys: KeySpace;
  dispatcher: TaskDispatcher;
  log: Logger;
  horizonMs: number;
  metrics: SchedulerMetrics;
}
