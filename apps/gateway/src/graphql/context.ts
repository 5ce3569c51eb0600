/** What every resolver receives. Built once per HTTP request or WebSocket operation. */
import type { Principal } from "../auth/principal.js";
import type { Logger } from "../observability/logger.js";
import type { GatewayMetrics } from "../observability/metrics.js";
import type { ApiKeyService } from "../services/api-key-service.js";
import type { ConsoleUserService } from "../services/console-user-service.js";
import type { DeadLetterService } from "../services/dead-letter-service.js";
import type { TaskActivityService } from "../services/task-activity-service.js";
import type { LeaseService } from "../services/lease-service.js";
import type { ScheduleService } from "../services/schedule-service.js";
import type { QueueService } from "../services/queue-service.js";
import type { TaskService } from "../services/task-service.js";
import type { TenantService } from "../services/tenant-service.js";
import type { WorkflowService } from "../services/workflow-service.js";
import type { WebhookService } from "../services/webhook-service.js";
import type { RealtimeService } from "../realtime/realtime-service.js";
import type { TenantOperations } from "../limits/tenant-operations.js";
import type { RequestLoaders } from "./loaders.js";

export interface GatewayServices {
  readonly tenants: TenantService;
  readonly apiKeys: ApiKeyService;
  readonly consoleUsers: ConsoleUserService;
  readonly deadLetters: DeadLetterService;
  readonly taskActivity: TaskActivityService;
  readonly queues: QueueService;
  readonly tasks: TaskService;
  readonly leases: LeaseService;
  readonly schedules: ScheduleService;
  readonly workflows: WorkflowService;
  readonly webhooks: WebhookService;
  /** GraphQL subscriptions (taskUpdated, workflowUpdated). */
  readonly realtime: RealtimeService;
  readonly metrics: GatewayMetrics;
  readonly config: { readonly allowPrivateTargets: boolean };
}

export interface GatewayContext {
  readonly requestId: string;
  /** The caller's W3C traceparent (HTTP header), when it sent a well-formed one: tasks it submits join that trace. */
  readonly traceParent: string | null;
  /** Aborted when the HTTP client goes away: long polls must stop leasing for nobody. */
  readonly signal?: AbortSignal;
  readonly log: Logger;
  readonly principal: Principal;
  readonly services: GatewayServices;
  /** Runs each operation within its tenant's share of this gateway (the executor and ws.ts use it). */
  readonly operations?: TenantOperations;
  /** Per request, so batching never mixes tenants and caches never outlive a request. */
  readonly loaders: RequestLoaders;
}
