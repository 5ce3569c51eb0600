import type { Logger, SchedulerEnv } from "@tasklane/config";
import type { Database } from "@tasklane/db";
import type { KeySpace, TaskDispatcher } from "@tasklane/queue";
import type { Redis } from "ioredis";
import type { SchedulerMetrics } from "./metrics.js";

/** What every scheduler loop shares. */
export interface SchedulerContext {
  env: SchedulerEnv;
  db: Database;
  redis: Redis;
  keys: KeySpace;
  dispatcher: TaskDispatcher;
  log: Logger;
  horizonMs: number;
  metrics: SchedulerMetrics;
}
