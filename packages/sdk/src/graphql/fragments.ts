/**
 * Field selections shared by the resource files, so every method returning a
 * Task (or Queue, …) returns the same shape as its TypeScript type.
 */

export const TASK_FIELDS = `fragment TaskFields on Task {
  id type queue payload status priority runAt createdAt startedAt completedAt
  attempts maxAttempts timeoutSeconds result lastError idempotencyKey orderingKey workflowId scheduleId cancelRequested traceParent
}`;

export const ATTEMPT_FIELDS = `fragment AttemptFields on Attempt {
  number workerId leaseToken startedAt finishedAt outcome error
}`;

export const QUEUE_FIELDS = `fragment QueueFields on Queue {
  name mode endpointUrl concurrency rateLimit { perSecond burst } paused
  stats { scheduled queued running retrying dead succeeded oldestQueuedAgeSeconds }
}`;

export const SCHEDULE_FIELDS = `fragment ScheduleFields on Schedule {
  id name cron timezone enabled version misfirePolicy overlapPolicy nextRunAt lastRunAt
}`;

export const WORKFLOW_FIELDS = `fragment WorkflowFields on Workflow {
  id name status createdAt completedAt taskCount tasks { key dependsOn task { ...TaskFields } }
}
${TASK_FIELDS}`;

export const WEBHOOK_FIELDS = `fragment WebhookFields on Webhook { id url events enabled disabledReason failureStreak previousSecretExpiresAt createdAt }`;

export const TENANT_FIELDS = `fragment TenantFields on Tenant {
  id name
  limits { weight maxConcurrency apiRatePerSecond apiBurst maxPendingTasks dailyTaskQuota }
  usage { pendingTasks runningTasks submittedToday }
}`;

export const API_KEY_FIELDS = `fragment ApiKeyFields on ApiKey { id name prefix scopes createdAt lastUsedAt revokedAt expiresAt }`;
