/** Queues, their live counts and recent activity. */
import "server-only";
import { gql } from "../gateway";
import type { ApiResult } from "../graphql-error";
import type { Queue, QueueActivity } from "./types";

const QUEUE = `name mode endpointUrl concurrency rateLimit { perSecond burst } paused
  stats { scheduled queued running retrying dead succeeded oldestQueuedAgeSeconds }`;

export async function listQueues(): Promise<ApiResult<Queue[]>> {
  const result = await gql<{ queues: Queue[] }>(`query ConsoleQueues { queues { ${QUEUE} } }`);
  return result.ok ? { ok: true, data: result.data.queues } : result;
}

/** Just the names (filters, pickers): no counting. */
export async function listQueueNames(): Promise<ApiResult<string[]>> {
  const result = await gql<{ queues: { name: string }[] }>(`query ConsoleQueueNames { queues { name } }`);
  return result.ok ? { ok: true, data: result.data.queues.map((q) => q.name) } : result;
}

/** null for a name no queue has, and for one no queue could have (the API refuses that: BAD_USER_INPUT). */
export async function getQueue(name: string): Promise<ApiResult<Queue | null>> {
  const result = await gql<{ queue: Queue | null }>(`query ConsoleQueue($name: String!) { queue(name: $name) { ${QUEUE} } }`, { name });
  if (result.ok) return { ok: true, data: result.data.queue };
  return result.error.code === "BAD_USER_INPUT" ? { ok: true, data: null } : result;
}

/** The overview's one round trip: every queue's counts and its last hour in 2-minute buckets. */
export async function overview(): Promise<ApiResult<{ queues: Queue[]; queueActivity: QueueActivity[] }>> {
  return gql<{ queues: Queue[]; queueActivity: QueueActivity[] }>(
    `query ConsoleOverview { queues { ${QUEUE} } queueActivity(minutes: 60, bucketMinutes: 2) { queue buckets { start succeeded failed } } }`,
  );
}

export interface UpsertQueueInput {
  name: string;
  mode: "PUSH" | "PULL";
  endpointUrl?: string | null;
  concurrency?: number | null;
  rateLimit?: { perSecond: number; burst?: number | null } | null;
  paused?: boolean | null;
  /** Limits to take away; a limit left null is left as it is. */
  removeLimits?: ("CONCURRENCY" | "RATE_LIMIT")[] | null;
}

export async function upsertQueue(input: UpsertQueueInput): Promise<ApiResult<Queue>> {
  const result = await gql<{ upsertQueue: Queue }>(`mutation ConsoleUpsertQueue($input: UpsertQueueInput!) { upsertQueue(input: $input) { ${QUEUE} } }`, { input });
  return result.ok ? { ok: true, data: result.data.upsertQueue } : result;
}

export async function setQueuePaused(name: string, paused: boolean): Promise<ApiResult<{ name: string; paused: boolean }>> {
  const op = paused ? "pauseQueue" : "resumeQueue";
  const result = await gql<Record<string, { name: string; paused: boolean }>>(`mutation ConsoleQueuePause($name: String!) { ${op}(name: $name) { name paused } }`, { name });
  return result.ok ? { ok: true, data: result.data[op] as { name: string; paused: boolean } } : result;
}

/** purgeQueue: cancels every task of the queue that is not running; answers the queue's counts afterwards. */
export async function purgeQueue(name: string): Promise<ApiResult<Queue>> {
  const result = await gql<{ purgeQueue: Queue }>(`mutation ConsolePurgeQueue($name: String!) { purgeQueue(name: $name) { ${QUEUE} } }`, { name });
  return result.ok ? { ok: true, data: result.data.purgeQueue } : result;
}

/** deleteQueue: CONFLICT (with the reason in its message) while the queue has unfinished tasks, a schedule or a running workflow. */
export async function deleteQueue(name: string): Promise<ApiResult<boolean>> {
  const result = await gql<{ deleteQueue: boolean }>(`mutation ConsoleDeleteQueue($name: String!) { deleteQueue(name: $name) }`, { name });
  return result.ok ? { ok: true, data: result.data.deleteQueue } : result;
}
