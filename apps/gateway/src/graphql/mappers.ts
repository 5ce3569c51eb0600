/** Storage rows → GraphQL objects. The only place that knows both shapes. */
import { startRateOf } from "@tasklane/core";
import type { Prisma, AttemptRecord, TaskAuditEventRecord, TaskView } from "@tasklane/db";
import type { Attempt, Task } from "./types/task.js";
import type { TaskAuditEvent } from "./types/task-audit-event.js";
import type { ApiKey } from "./types/api-key.js";
import type { Queue } from "./types/queue.js";
import type { Tenant } from "./types/tenant.js";
import type { Webhook, WebhookDelivery } from "./types/webhook.js";
import type { WebhookDeliveryView } from "../services/webhook-service.js";

export function toTask(r: TaskView): Task {
  return {
    id: r.id,
    type: r.type,
    queue: r.queueName,
    payload: r.payload,
    status: r.status,
    priority: r.priority,
    runAt: r.runAt,
    createdAt: r.createdAt,
    startedAt: r.startedAt,
    completedAt: r.completedAt,
    attempts: r.attempts,
    maxAttempts: r.maxAttempts,
    timeoutSeconds: r.timeoutSeconds,
    result: r.result,
    lastError: r.lastError,
    idempotencyKey: r.idempotencyKey,
    orderingKey: r.orderingKey,
    workflowId: r.workflowId,
    scheduleId: r.scheduleId,
    cancelRequested: r.cancelRequested,
    traceParent: r.traceParent,
  };
}

export function toTaskAuditEvent(r: TaskAuditEventRecord): TaskAuditEvent {
  return {
    id: r.id,
    previousStatus: r.fromStatus,
    status: r.toStatus,
    at: r.at,
    attempt: r.attempt,
    leaseGeneration: r.leaseGeneration,
    actor: r.actor,
    reason: r.reason,
  };
}

export function toAttempt(r: AttemptRecord): Attempt {
  return {
    number: r.number,
    workerId: r.workerId,
    leaseToken: r.leaseToken,
    startedAt: r.startedAt,
    finishedAt: r.finishedAt,
    outcome: r.outcome,
    error: r.error,
  };
}

export function toTenant(r: Prisma.TenantModel): Tenant {
  return {
    id: r.id,
    name: r.name,
    limits: {
      weight: r.weight,
      maxConcurrency: r.maxConcurrency,
      apiRatePerSecond: r.apiRatePerSecond,
      apiBurst: r.apiBurst,
      maxPendingTasks: r.maxPendingTasks,
      dailyTaskQuota: r.dailyTaskQuota,
    },
  };
}

export function toApiKey(r: Prisma.ApiKeyModel): ApiKey {
  return {
    id: r.id,
    name: r.name,
    prefix: r.prefix,
    scopes: r.scopes,
    createdAt: r.createdAt,
    lastUsedAt: r.lastUsedAt,
    revokedAt: r.revokedAt,
    expiresAt: r.expiresAt,
  };
}

export function toQueue(r: Prisma.QueueModel): Queue {
  return {
    id: r.id,
    name: r.name,
    mode: r.mode,
    endpointUrl: r.endpointUrl,
    concurrency: r.concurrency,
    rateLimit: startRateOf(r.rateLimitPerSecond, r.rateLimitBurst),
    paused: r.paused,
  };
}

/** The secret is never mapped: it is shown once, by createWebhook. */
export function toWebhook(r: Prisma.WebhookModel): Webhook {
  return {
    id: r.id,
    url: r.url,
    events: r.events,
    enabled: r.enabled && r.deletedAt === null,
    disabledReason: r.disabledReason,
    failureStreak: r.failureStreak,
    previousSecretExpiresAt: r.previousSecretExpiresAt !== null && r.previousSecretExpiresAt > new Date() ? r.previousSecretExpiresAt : null,
    createdAt: r.createdAt,
  };
}

export function toWebhookDelivery(r: WebhookDeliveryView): WebhookDelivery {
  return {
    id: r.id,
    webhookId: r.webhookId,
    event: r.event,
    taskId: r.taskId,
    status: r.status,
    attempts: r.attempts,
    lastResponseCode: r.lastResponseCode,
    lastError: r.lastError,
    createdAt: r.createdAt,
    deliveredAt: r.deliveredAt,
    nextAttemptAt: r.status === "PENDING" ? r.nextAttemptAt : null,
  };
}
