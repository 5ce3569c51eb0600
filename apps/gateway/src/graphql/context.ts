/** What every resolver receives. Built once per HTTP request or WebSocket operation. */
import type { Principal } from "../auth/principal.js";
import type { Logger } from "../observability/logger.js";
import type { GatewayMetrics } from "../observability/metrics.js";
import type { ApiKeyService } from "../services/api-key-service.js";
import type { LeaseService } from "../services/lease-service.js";
import type { ScheduleService } from "../services/schedule-service.js";
import type { QueueService } from "../services/queue-service.js";
import type { TaskService } from "../services/task-service.js";
import type { TenantService } from "../services/tenant-service.js";
import type { RequestLoaders } from "./loaders.js";

export interface GatewayServices {
  readonly tenants: TenantService;
  readonly apiKeys: ApiKeyService;
  readonly queues: QueueService;
  readonly tasks: TaskService;
  readonly leases: LeaseService;
  readonly schedules: ScheduleService;
  readonly metrics: GatewayMetrics;
  readonly config: { readonly allowPrivateTargets: boolean };
}

export interface GatewayContext {
  readonly requestId: string;
  /** Aborted when the HTTP client goes away: long polls must stop leasing for nobody. */
  readonly signal?: AbortSignal;
  readonly log: Logger;
  readonly principal: Principal;
  readonly services: GatewayServices;
  /** Per request, so batching never mixes tenants and caches never outlive a request. */
  readonly loaders: RequestLoaders;
}
