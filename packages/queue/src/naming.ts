/**
 * Redis key layout. Every key of one tenant carries the tenant id as its hash
 * tag ({ten_…}), so a tenant's BullMQ queues and counters live in one Redis
 * Cluster slot and multi-key scripts stay legal on a cluster. Keys shared by
 * the whole deployment (the active-queue index, channels) are touched by
 * single-key commands only.
 */
export interface KeySpace {
  /** BullMQ `prefix` option. */
  readonly prefix: string;
  /** BullMQ queue name of one tenant queue (no ":" allowed by BullMQ). */
  bullQueueName(tenantId: string, queueId: string): string;
  /** Parses a name made by bullQueueName. */
  parseBullQueueName(name: string): { tenantId: string; queueId: string } | null;
  /** Set of BullMQ queue names that may hold waiting or delayed jobs. */
  readonly activeQueues: string;
  /** Pub/sub: a queue received work (message = BullMQ queue name, and when all of it is delayed the earliest due time: doorbell.ts). */
  readonly doorbellChannel: string;
  /** Pub/sub: a running task was cancelled (message = task id). */
  readonly cancelChannel: string;
  /** Pub/sub: one tenant's task events (task-events.ts); never carries another tenant's. */
  eventsChannel(tenantId: string): string;
  /** Sorted set of tenants with live task-event subscribers (event-listeners.ts). */
  readonly eventListeners: string;
  /** Pub/sub: a tenant was marked in eventListeners that was not marked before (message = how many). */
  readonly eventListenersAddedChannel: string;
  /** Written once by the reconciler; its absence means Redis lost its data. */
  readonly epochKey: string;
  /** BullMQ's job hash key, to check existence cheaply. */
  jobKey(bullQueueName: string, jobId: string): string;
  /** The gateway's API token bucket of one tenant (scripts/token-bucket.lua). */
  apiBucket(tenantId: string): string;
}

export function createKeySpace(prefix: string): KeySpace {
  return {
    prefix,
    bullQueueName: (tenantId, queueId) => `{${tenantId}}.${queueId}`,
    parseBullQueueName(name) {
      const m = /^\{([^}]+)\}\.(.+)$/.exec(name);
      return m ? { tenantId: m[1] as string, queueId: m[2] as string } : null;
    },
    activeQueues: `${prefix}:active-queues`,
    doorbellChannel: `${prefix}:doorbell`,
    cancelChannel: `${prefix}:cancel`,
    eventsChannel: (tenantId) => `${prefix}:events:${tenantId}`,
    eventListeners: `${prefix}:event-listeners`,
    eventListenersAddedChannel: `${prefix}:event-listeners:added`,
    epochKey: `${prefix}:epoch`,
    jobKey: (bullQueueName, jobId) => `${prefix}:${bullQueueName}:${jobId}`,
    apiBucket: (tenantId) => `${prefix}:{${tenantId}}:api-bucket`,
  };
}

/** One job per (task, dispatch generation): a repeated dispatch of the same generation is a no-op. */
export const jobIdFor = (taskId: string, dispatchGeneration: number) => `${taskId}.${dispatchGeneration}`;
