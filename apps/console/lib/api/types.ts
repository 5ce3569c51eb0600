/** The shapes the console reads from the API (a subset of the contract's types). */
import type { MisfirePolicy, OverlapPolicy, Priority, TaskStatus, WorkflowStatus } from "../statuses";

export interface Attempt {
  number: number;
  workerId: string | null;
  leaseToken: string | null;
  startedAt: string;
  finishedAt: string | null;
  outcome: string | null;
  error: string | null;
}

export interface TaskSummary {
  id: string;
  type: string;
  queue: string;
  status: TaskStatus;
  priority: Priority;
  runAt: string;
  createdAt: string;
  completedAt: string | null;
  attempts: number;
  maxAttempts: number;
  lastError: string | null;
}

export interface TaskDetail extends TaskSummary {
  payload: unknown;
  result: unknown;
  startedAt: string | null;
  idempotencyKey: string | null;
  orderingKey: string | null;
  workflowId: string | null;
  scheduleId: string | null;
  cancelRequested: boolean;
  /** The task this one replays (replayTask); null for any other. */
  replayOf: string | null;
  attemptHistory: Attempt[];
}

export interface TaskPage {
  nodes: TaskSummary[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
  totalCount: number;
}

export interface QueueStats {
  scheduled: number;
  queued: number;
  running: number;
  retrying: number;
  dead: number;
  succeeded: number;
  oldestQueuedAgeSeconds: number | null;
}

export interface Queue {
  name: string;
  mode: "PUSH" | "PULL";
  endpointUrl: string | null;
  concurrency: number | null;
  rateLimit: { perSecond: number; burst: number } | null;
  paused: boolean;
  stats: QueueStats;
}

export interface ActivityBucket {
  start: string;
  succeeded: number;
  failed: number;
}

export interface QueueActivity {
  queue: string;
  buckets: ActivityBucket[];
}

export interface Schedule {
  id: string;
  name: string;
  cron: string;
  timezone: string;
  enabled: boolean;
  version: number;
  misfirePolicy: MisfirePolicy;
  overlapPolicy: OverlapPolicy;
  nextRunAt: string | null;
  lastRunAt: string | null;
}

export interface WorkflowNode {
  key: string;
  dependsOn: string[];
  task: { id: string; type: string; status: TaskStatus; attempts: number; maxAttempts: number; lastError: string | null };
}

export interface WorkflowSummary {
  id: string;
  name: string;
  status: WorkflowStatus;
  createdAt: string;
  completedAt: string | null;
}

export interface Workflow extends WorkflowSummary {
  tasks: WorkflowNode[];
}

export interface Webhook {
  id: string;
  url: string;
  events: string[];
  enabled: boolean;
  /** Why it is disabled (410 Gone, repeated failures, the tenant); null while enabled. */
  disabledReason: string | null;
  /** Until when the secret the last rotation replaced still signs beside the current one; null when none does. */
  previousSecretExpiresAt: string | null;
}

export interface WebhookDelivery {
  id: string;
  webhookId: string | null;
  event: string;
  taskId: string | null;
  status: string;
  attempts: number;
  lastResponseCode: number | null;
  lastError: string | null;
  createdAt: string;
  deliveredAt: string | null;
  /** PENDING: when its next attempt is due (past while it is being sent or waits for a slot); null once DELIVERED or FAILED. */
  nextAttemptAt: string | null;
}

export interface ApiKey {
  id: string;
  name: string;
  prefix: string;
  scopes: string[];
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
  expiresAt: string | null;
}

export interface Tenant {
  id: string;
  name: string;
  limits: {
    weight: number;
    maxConcurrency: number | null;
    apiRatePerSecond: number;
    apiBurst: number;
    maxPendingTasks: number | null;
    dailyTaskQuota: number | null;
  };
  usage: { pendingTasks: number; runningTasks: number; submittedToday: number };
}
