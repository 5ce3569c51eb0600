/** Wires the gateway's services from its I/O handles. */
import type { Database } from "@tasklane/db";
import type { Redis } from "ioredis";
import { createKeySpace, createTaskDispatcher, dispatchAfterCommit, type TaskDispatcher } from "@tasklane/queue";
import type { DispatchIntent } from "@tasklane/db";
import type { ApiKeyAuthenticator } from "../auth/api-key-authenticator.js";
import type { GatewayServices } from "../graphql/context.js";
import type { Logger } from "../observability/logger.js";
import type { GatewayMetrics } from "../observability/metrics.js";
import { ApiKeyService } from "./api-key-service.js";
import type { HostResolver } from "./outbound-url.js";
import { QueueService } from "./queue-service.js";
import { createTaskService, type TaskService } from "./task-service.js";
import { TenantService } from "./tenant-service.js";
import { LeaseService } from "./lease-service.js";
import { PullDoorbell } from "./pull-doorbell.js";
import { ScheduleService } from "./schedule-service.js";

export interface ServiceDeps {
  db: Database;
  redis: Redis;
  redisKeyPrefix: string;
  log: Logger;
  metrics: GatewayMetrics;
  authenticator: ApiKeyAuthenticator;
  allowPrivateTargets: boolean;
  horizonMs: number;
  agingSeconds: number;
  /** A dedicated connection for pub/sub (a subscribed connection cannot run commands). */
  subscriber: Redis;
  /** Test seams: replace the task storage seam or DNS. */
  taskService?: TaskService;
  resolver?: HostResolver;
}

export function createServices(deps: ServiceDeps): { services: GatewayServices; dispatcher: TaskDispatcher; doorbell: PullDoorbell } {
  const keys = createKeySpace(deps.redisKeyPrefix);
  const dispatcher = createTaskDispatcher(deps.redis, keys);
  const doorbell = new PullDoorbell(deps.redis, deps.subscriber, `${deps.redisKeyPrefix}:pull-doorbell`);
  const dispatch = (intents: DispatchIntent[]) =>
    dispatchAfterCommit(deps.db, dispatcher, intents, (error: unknown) =>
      deps.log.warn({ err: error, count: intents.length }, "post-commit dispatch failed; the outbox will deliver"),
    );
  const tasks =
    deps.taskService ??
    createTaskService({
      db: deps.db,
      dispatcher,
      log: deps.log,
      horizonMs: deps.horizonMs,
      ringPullQueues: (queueIds) => doorbell.ring(queueIds),
      announceCancel: async (taskId) => {
        await deps.redis.publish(keys.cancelChannel, taskId);
      },
    });
  return {
    dispatcher,
    doorbell,
    services: {
      leases: new LeaseService({ db: deps.db, doorbell, dispatch, horizonMs: deps.horizonMs, agingSeconds: deps.agingSeconds }),
      schedules: new ScheduleService(deps.db, dispatch, deps.horizonMs),
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
