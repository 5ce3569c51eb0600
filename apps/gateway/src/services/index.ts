/** Wires the gateway's services from its I/O handles. */
import type { Database } from "@tasklane/db";
import type { Redis } from "ioredis";
import { createKeySpace, createTaskDispatcher, type TaskDispatcher } from "@tasklane/queue";
import type { ApiKeyAuthenticator } from "../auth/api-key-authenticator.js";
import type { GatewayServices } from "../graphql/context.js";
import type { Logger } from "../observability/logger.js";
import type { GatewayMetrics } from "../observability/metrics.js";
import { ApiKeyService } from "./api-key-service.js";
import type { HostResolver } from "./outbound-url.js";
import { QueueService } from "./queue-service.js";
import { createTaskService, type TaskService } from "./task-service.js";
import { TenantService } from "./tenant-service.js";

export interface ServiceDeps {
  db: Database;
  redis: Redis;
  redisKeyPrefix: string;
  log: Logger;
  metrics: GatewayMetrics;
  authenticator: ApiKeyAuthenticator;
  allowPrivateTargets: boolean;
  /** Test seams: replace the task storage seam or DNS. */
  taskService?: TaskService;
  resolver?: HostResolver;
}

export function createServices(deps: ServiceDeps): { services: GatewayServices; dispatcher: TaskDispatcher } {
  const keys = createKeySpace(deps.redisKeyPrefix);
  const dispatcher = createTaskDispatcher(deps.redis, keys);
  const tasks =
    deps.taskService ??
    createTaskService({
      db: deps.db,
      dispatcher,
      log: deps.log,
      announceCancel: async (taskId) => {
        await deps.redis.publish(keys.cancelChannel, taskId);
      },
    });
  return {
    dispatcher,
    services: {
      tenants: new TenantService(deps.db),
      apiKeys: new ApiKeyService(deps.db, deps.authenticator),
      queues: new QueueService(deps.db, {
        allowPrivateTargets: deps.allowPrivateTargets,
        ...(deps.resolver ? { resolver: deps.resolver } : {}),
      }),
      tasks,
      metrics: deps.metrics,
      config: { allowPrivateTargets: deps.allowPrivateTargets },
    },
  };
}
