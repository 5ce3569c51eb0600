/**
 * zod schemas for arguments that core has no schema for (gateway-only
 * operations). Everything else is parsed with core's schemas.
 */
import { DEFAULT_LEASE_SECONDS, DEFAULT_QUEUE_NAME, MAX_PAGE_SIZE, MAX_LEASE_BATCH, MAX_LEASE_SECONDS, MAX_START_AHEAD_MS, MAX_WAIT_SECONDS, isEventId, nonBlankString, queueNameSchema } from "@tasklane/core";
import { z } from "zod";
import { API_KEY_SCOPES, ApiKeyScope } from "../auth/scopes.js";

/** Ids are checked for shape by the services (a malformed id is simply NOT_FOUND). */
export const idArgSchema = z.string().min(1).max(200);

export const queueNameArgSchema = queueNameSchema;

/** taskUpdated's `after`: an event id (TaskEvent.id, TaskAuditEvent.id). */
export const eventIdArgSchema = z
  .string()
  .refine(isEventId, { message: "must be an event id (TaskEvent.id)" })
  .transform((id) => BigInt(id));

/** deleteQueue: every tenant keeps its "default" queue (the SDK's and the README's queue when none is named). */
export const deletableQueueNameArgSchema = queueNameSchema.refine((name) => name !== DEFAULT_QUEUE_NAME, {
  message: `the ${DEFAULT_QUEUE_NAME} queue cannot be deleted (purgeQueue empties it)`,
});

export const createApiKeyArgsSchema = z.object({
  name: nonBlankString(200),
  // Omitted: a "full" key, like the one createTenant issues.
  scopes: z
    .array(z.enum(API_KEY_SCOPES as [ApiKeyScope, ...ApiKeyScope[]]))
    .min(1)
    .max(API_KEY_SCOPES.length)
    .nullish()
    .transform((s) => [...new Set(s ?? [ApiKeyScope.full])]),
});

export const leaseArgsSchema = z.object({
  queue: queueNameSchema,
  workerId: nonBlankString(200),
  max: z.number().int().min(1).max(MAX_LEASE_BATCH).nullish().transform((v) => v ?? 1),
  leaseSeconds: z.number().int().min(1).max(MAX_LEASE_SECONDS).nullish().transform((v) => v ?? DEFAULT_LEASE_SECONDS),
  waitSeconds: z.number().min(0).max(MAX_WAIT_SECONDS).nullish().transform((v) => v ?? 0),
  startAheadMs: z.number().int().min(0).max(MAX_START_AHEAD_MS).nullish().transform((v) => v ?? 0),
});

export const leaseTokenArgsSchema = z.object({
  taskId: idArgSchema,
  leaseToken: z.string().min(1).max(200),
});

/*
 * Each operation's arguments are parsed as one object keyed by argument name,
 * so a refusal's fieldErrors path names the argument ("extendSeconds",
 * "completions.3.leaseToken"); a bare scalar schema answers the path "".
 */

export const heartbeatArgsSchema = leaseTokenArgsSchema.extend({
  extendSeconds: z.number().int().min(1).max(MAX_LEASE_SECONDS).nullish().transform((v) => v ?? DEFAULT_LEASE_SECONDS),
});

export const failTaskArgsSchema = leaseTokenArgsSchema.extend({
  /** Errors are stored truncated (MAX_ERROR_LENGTH), so only absurd sizes are refused. */
  error: z.string().max(1_000_000),
});

/** Schedule.runs(first): newest runs, 20 unless asked, never more than a page. */
export const runsFirstSchema = z.number().int().min(1).max(MAX_PAGE_SIZE).nullish().transform((v) => v ?? 20);

/** completeTasks: at most this many outcomes per call, each task once. */
export const MAX_COMPLETIONS_PER_CALL = 500;
export const completeTasksArgsSchema = z.object({
  completions: z
    .array(leaseTokenArgsSchema.extend({ result: z.unknown().optional() }))
    .min(1)
    .max(MAX_COMPLETIONS_PER_CALL)
    .refine((items) => new Set(items.map((i) => i.taskId)).size === items.length, { message: "each taskId at most once per call" }),
});
