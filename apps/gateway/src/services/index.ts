/** Wires the gateway's services from its I/O handles. */
import type { Database } from "@tasklane/db";
import { EventListenerRegistry, FleetLimits, MissingJobFinder, announceCancellations, createKeySpace, createTaskDispatcher, dispatchAfterCommit, type TaskDispatcher, type RedisClient } from "@tasklane/queue";
import type { DispatchIntent } from "@tasklane/db";
import type { ApiKeyAuthenticator } from "../auth/api-key-authenticator.js";
import type { GatewayServices } from "../graphql/context.js";
import type { Logger } from "../observability/logger.js";
import type { GatewayMetrics } from "../observability/metrics.js";
import { ApiKeyService } from "./api-key-service.js";
import type { HostResolver } from "./outbound-url.js";
import { QueueService } from "./queue-service.js";
import { DeletedQueueJobs } from "./deleted-queue-jobs.js";
import { createTaskService, type TaskService, type TaskServiceDeps } from "./task-service.js";
import { TenantService } from "./tenant-service.js";
import { LeaseService } from "./lease-service.js";
import { PullDoorbell } from "./pull-doorbell.js";
import { PullQueueCache } from "./pull-queue-cache.js";
import { ScheduleService } from "./schedule-service.js";
import { WorkflowService } from "./workflow-service.js";
import { ConsoleUserService } from "./console-user-service.js";
import { DeadLetterService } from "./dead-letter-service.js";
import { TaskActivityService } from "./task-activity-service.js";
import { WebhookService } from "./webhook-service.js";
import { TaskEventHub } from "../realtime/event-hub.js";
import { RealtimeService } from "../realtime/realtime-service.js";

export interface ServiceDeps {
  db: Database;
  redis: RedisClient;
  redisKeyPrefix: string;
  log: Logger;
  metrics: GatewayMetrics;
  authenticator: ApiKeyAuthenticator;
  allowPrivateTargets: boolean;
  horizonMs: number;
  agingSeconds: number;
  /** A dedicated connection for pub/sub (a subscribed connection cannot run commands). */
  subscriber: RedisClient;
  /** Platform protection for submissions (limits/backlog-guard.ts). */
  backlog?: TaskServiceDeps["backlog"];
  /** SCHEDULE_MISFIRE_GRACE_SECONDS in ms, for the occurrences a schedule change fires (ScheduleService). */
  misfireGraceMs?: number;
  /** Test seams: replace the task storage seam or DNS. */
  taskService?: TaskService;
  resolver?: HostResolver;
}

export function createServices(deps: ServiceDeps): { services: GatewayServices; dispatcher: TaskDispatcher; doorbell: PullDoorbell; hub: TaskEventHub } {
  const keys = createKeySpace(deps.redisKeyPrefix);
  const dispatcher = createTaskDispatcher(deps.redis, keys);
  const doorbell = new PullDoorbell(deps.redis, deps.subscriber, `${deps.redisKeyPrefix}:pull-doorbell`);
  const dispatch = (
    intents: DispatchIntent[],
    onError = (error: unknown) => deps.log.warn({ err: error, count: intents.length }, "post-commit dispatch failed; the outbox will deliver"),
  ) => dispatchAfterCommit(deps.db, dispatcher, intents, onError);
  // Best effort and bounded (cancel-signal.ts): a cancel's answer never waits for a Redis that is down.
  const announceCancel = async (taskId: string) => {
    await announceCancellations(deps.redis, keys, [taskId]);
  };
  const apiKeys = new ApiKeyService(deps.db, deps.authenticator);
  const pullQueues = new PullQueueCache(deps.db);
  const tasks =
    deps.taskService ??
    createTaskService({
      db: deps.db,
      dispatcher,
      log: deps.log,
      horizonMs: deps.horizonMs,
      ringPullQueues: (queueIds) => doorbell.ring(queueIds),
      announceCancel,
      ...(deps.backlog ? { backlog: deps.backlog } : {}),
      onCreated: (n) => deps.metrics.tasksSubmitted.inc(n),
    });
  const services: Omit<GatewayServices, "webhooks" | "realtime"> = {
    leases: new LeaseService({
      db: deps.db,
      doorbell,
      dispatch,
      horizonMs: deps.horizonMs,
      agingSeconds: deps.agingSeconds,
      limits: new FleetLimits(deps.redis, keys),
      queues: pullQueues,
      onTakeError: (error, queueId, failures) => deps.log.warn({ err: error, queueId, failures }, "could not take start tokens; the rate-limited queue leases nothing until Redis answers"),
      onRefundError: (error, queueId, dropped) => deps.log.warn({ err: error, queueId, dropped }, "could not give unused start tokens back; the queue starts slower until its bucket refills"),
    }),
    schedules: new ScheduleService(
      deps.db,
      dispatch,
      deps.horizonMs,
      (taskId) => announceCancel(taskId).catch((error: unknown) => deps.log.warn({ err: error, taskId }, "could not announce cancellation")),
      deps.backlog,
      deps.misfireGraceMs,
    ),
    workflows: new WorkflowService({
      db: deps.db,
      log: deps.log,
      horizonMs: deps.horizonMs,
      dispatch,
      ringPullQueues: (queueIds) => doorbell.ring(queueIds),
      announceCancel,
      ...(deps.backlog ? { backlog: deps.backlog } : {}),
    }),
    tenants: new TenantService(deps.db),
    apiKeys,
    consoleUsers: new ConsoleUserService(deps.db, apiKeys),
    deadLetters: new DeadLetterService(deps.db),
    taskActivity: new TaskActivityService(deps.db),
    queues: new QueueService(deps.db, {
      allowPrivateTargets: deps.allowPrivateTargets,
      pullQueues,
      redispatch: {
        dispatcher,
        finder: new MissingJobFinder(deps.redis, keys),
        horizonMs: deps.horizonMs,
        onError: (error, queueId) => deps.log.warn({ err: error, queueId }, "could not put a resumed queue's tasks back in Redis; the reconciler will"),
        onBackgroundDone: (queueId, outcome) =>
          deps.log.info({ queueId, ...outcome }, outcome.complete ? "resumed queue's backlog checked" : "resumed queue's backlog partly checked; the reconciler's sweep takes the rest"),
      },
      lifecycle: {
        dispatch,
        jobs: new DeletedQueueJobs(deps.redis, keys),
        onError: (error, queueId, what) => deps.log.warn({ err: error, queueId }, `could not ${what}`),
      },
      ...(deps.resolver ? { resolver: deps.resolver } : {}),
    }),
    tasks,
    metrics: deps.metrics,
    config: { allowPrivateTargets: deps.allowPrivateTargets },
  };
  // One subscriber connection per process for task events (shared with the doorbell), fanned out in-process.
  const hub = new TaskEventHub(deps.subscriber, keys, (tenantId, taskId) => tasks.get(tenantId, taskId), deps.log, new EventListenerRegistry(deps.redis, keys));
  return {
    dispatcher,
    doorbell,
    hub,
    services: {
      ...services,
      webhooks: new WebhookService(deps.db, {
        allowPrivateTargets: deps.allowPrivateTargets,
        ...(deps.resolver ? { resolver: deps.resolver } : {}),
      }),
      realtime: new RealtimeService(deps.db, hub, tasks, services.queues, services.workflows, deps.log),
    },
  };
}
