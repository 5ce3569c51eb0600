/**
 * Task events on Redis pub/sub: the notifier's relay publishes every
 * task_events row, in id order, on its tenant's channel
 * (`KeySpace.eventsChannel`); gateways subscribe to the channels of tenants
 * with live subscribers. Pub/sub is fire-and-forget: Postgres stays the record,
 * this is only the live feed.
 */
import type { RedisClient } from "./connection.js";
import { TaskStatus } from "@tasklane/core";
import type { KeySpace } from "./naming.js";

/** One status change, as compact JSON on the wire. */
export interface TaskEventMessage {
  /** task_events.id as a decimal string: grows along each channel, so receivers can drop repeats. */
  eventId: string;
  taskId: string;
  tenantId: string;
  queueId: string;
  /** Set when the task belongs to a workflow: the ping workflowUpdated listens for. */
  workflowId: string | null;
  from: TaskStatus | null;
  to: TaskStatus;
  /** ISO-8601 with milliseconds. */
  at: string;
}

const STATUSES = new Set<string>(Object.values(TaskStatus));
const isStatus = (v: unknown): v is TaskStatus => typeof v === "string" && STATUSES.has(v);
const isText = (v: unknown): v is string => typeof v === "string" && v.length > 0;

export function encodeTaskEvent(event: TaskEventMessage): string {
  return JSON.stringify(event);
}

/** Null for anything that is not a well-formed event (a foreign publisher, a version skew): never throws. */
export function decodeTaskEvent(message: string): TaskEventMessage | null {
  let v: unknown;
  try {
    v = JSON.parse(message);
  } catch {
    return null;
  }
  if (typeof v !== "object" || v === null) return null;
  const o = v as Record<string, unknown>;
  if (!isText(o.eventId) || !/^\d+$/.test(o.eventId) || !isText(o.taskId) || !isText(o.tenantId) || !isText(o.queueId)) return null;
  if (!(o.workflowId === null || isText(o.workflowId))) return null;
  if (!(o.from === null || isStatus(o.from)) || !isStatus(o.to)) return null;
  if (!isText(o.at) || Number.isNaN(Date.parse(o.at))) return null;
  return {
    eventId: o.eventId,
    taskId: o.taskId,
    tenantId: o.tenantId,
    queueId: o.queueId,
    workflowId: o.workflowId,
    from: o.from,
    to: o.to,
    at: o.at,
  };
}

/**
 * Publishes in the given order over one connection (one pipeline), which
 * Redis delivers to each subscriber in that same order.
 */
export async function publishTaskEvents(redis: RedisClient, keys: KeySpace, events: readonly TaskEventMessage[]): Promise<void> {
  if (events.length === 0) return;
  const pipeline = redis.pipeline();
  for (const e of events) pipeline.publish(keys.eventsChannel(e.tenantId), encodeTaskEvent(e));
  const results = await pipeline.exec();
  const failed = results?.find(([error]) => error !== null);
  if (failed?.[0]) throw new Error("publishing task events failed", { cause: failed[0] });
}
