/**
 * Per-request DataLoaders: a list of 500 tasks asking for attemptHistory, or
 * every queue asking for stats, costs one query instead of one per row.
 */
import DataLoader from "dataloader";
import type { AttemptRecord } from "@tasklane/db";
import type { QueueService, QueueStatsCounts } from "../services/queue-service.js";
import type { TaskService } from "../services/task-service.js";

export interface RequestLoaders {
  readonly attempts: DataLoader<string, AttemptRecord[]>;
  readonly queueStats: DataLoader<string, QueueStatsCounts>;
}

export function createLoaders(services: { tasks: TaskService; queues: QueueService }): RequestLoaders {
  return {
    attempts: new DataLoader<string, AttemptRecord[]>(async (ids) => {
      const byTask = await services.tasks.attempts([...ids]);
      return ids.map((id) => byTask.get(id) ?? []);
    }),
    queueStats: new DataLoader<string, QueueStatsCounts>(async (ids) => {
      const byQueue = await services.queues.stats(ids);
      return ids.map((id) => byQueue.get(id) ?? new Error(`no stats for queue ${id}`));
    }),
  };
}
