import type { Logger, WorkerEnv } from "@tasklane/config";
import type { ServerClock } from "@tasklane/core/server-clock";
import type { Database } from "@tasklane/db";
import type { KeySpace, TaskDispatcher, RedisClient } from "@tasklane/queue";
import type { Agent } from "undici";
import type { CompletionBatcher } from "./completion-batcher.js";
import type { QueueDirectory } from "./fetch/queue-directory.js";
import type { WorkerMetrics } from "./metrics.js";

export interface WorkerContext {
  env: WorkerEnv;
  workerId: string;
  db: Database;
  redis: RedisClient;
  keys: KeySpace;
  dispatcher: TaskDispatcher;
  directory: QueueDirectory;
  completions: CompletionBatcher;
  agent: Agent;
  log: Logger;
  horizonMs: number;
  /** Learnt from start statements: when a task started ahead of its runAt is due, in this process's time. */
  serverClock: ServerClock;
  metrics: WorkerMetrics;
}
