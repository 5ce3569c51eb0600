import { z } from "zod";

/** Environment shared by every app; each app parses it once at start. */
const booleanFlag = (fallback: "0" | "1") =>
  z
    .enum(["0", "1", "true", "false"])
    .default(fallback)
    .transform((v) => v === "1" || v === "true");

const retrySchedule = z
  .string()
  .default("5,30,120,600,3600,21600")
  .transform((s, ctx) => {
    const parts = s.split(",").map((p) => Number(p.trim()));
    if (parts.length === 0 || parts.some((n) => !Number.isFinite(n) || n < 0)) {
      ctx.addIssue({ code: "custom", message: "must be comma-separated non-negative seconds" });
      return z.NEVER;
    }
    return parts;
  });

/** "host:port,host:port" → seed nodes of a Redis Cluster (any reachable master finds the rest). */
const clusterNodes = z.string().transform((s, ctx) => {
  const nodes: { host: string; port: number }[] = [];
  for (const part of s.split(",")) {
    const url = URL.parse(`redis://${part.trim()}`);
    if (!url || url.port === "" || url.username !== "" || !["", "/"].includes(url.pathname)) {
      ctx.addIssue({ code: "custom", message: `"${part}" is not host:port` });
      return z.NEVER;
    }
    nodes.push({ host: url.hostname.replace(/^\[|\]$/g, ""), port: Number(url.port) });
  }
  return nodes;
});

export const baseEnvSchema = z.object({
  DATABASE_URL: z.string().url().default("postgresql://postgres@127.0.0.1:5432/tasklane"),
  REDIS_URL: z.string().url().default("redis://127.0.0.1:6379/0"),
  /**
   * Seed nodes of a Redis Cluster; when set every app connects to the cluster
   * and REDIS_URL only supplies the credentials and TLS (its DB index must be 0).
   */
  REDIS_CLUSTER_NODES: clusterNodes.optional(),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  ALLOW_PRIVATE_TARGETS: booleanFlag("0"),
  /** Prefix of every Redis key this deployment owns (tests give each file its own). */
  REDIS_KEY_PREFIX: z.string().regex(/^[A-Za-z0-9_-]{1,32}$/).default("tl"),
  /** Tasks due within this horizon are placed in Redis's delayed set; later ones stay in Postgres. */
  DISPATCH_HORIZON_SECONDS: z.coerce.number().positive().max(86_400).default(300),
  /** A task waiting longer than this counts one priority lane higher (starvation guard). */
  PRIORITY_AGING_SECONDS: z.coerce.number().positive().default(60),
});

export const gatewayEnvSchema = baseEnvSchema.extend({
  PORT: z.coerce.number().int().min(0).max(65535).default(4000),
  HOST: z.string().default("0.0.0.0"),
  ADMIN_TOKEN: z.string().min(16).optional(),
  /** GraphQL introspection for authenticated callers; unset means on, except when NODE_ENV=production. */
  INTROSPECTION: z
    .enum(["0", "1", "true", "false"])
    .optional()
    .transform((v) => (v === undefined ? undefined : v === "1" || v === "true")),
  /** Platform protection: pending tasks across all tenants before submissions get OVERLOADED. */
  GLOBAL_MAX_PENDING_TASKS: z.coerce.number().int().positive().default(5_000_000),
});

export const schedulerEnvSchema = baseEnvSchema.extend({
  RECONCILE_INTERVAL_SECONDS: z.coerce.number().positive().default(15),
  /** How late a cron occurrence may fire and still count as on time rather than missed. */
  SCHEDULE_MISFIRE_GRACE_SECONDS: z.coerce.number().min(0).default(30),
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  /**
   * Adds tenant and queue labels to the queue-depth gauges. Off by default:
   * series grow with tenants × queues, which only small deployments can afford.
   */
  METRICS_TENANT_LABELS: booleanFlag("0"),
  /** Finished tasks (with their attempts and audit events) are deleted this many days after completion; 0 keeps them forever. */
  TASK_RETENTION_DAYS: z.coerce.number().min(0).default(30),
  /** How often the retention job looks for tasks past TASK_RETENTION_DAYS. */
  RETENTION_PRUNE_INTERVAL_SECONDS: z.coerce.number().positive().default(60),
});

export const workerEnvSchema = baseEnvSchema.extend({
  WORKER_CONCURRENCY: z.coerce.number().int().positive().max(10_000).default(100),
  /**
   * Delayed and retrying tasks are started this many ms before their runAt and
   * their request is sent at runAt, so the fetch and the start statement are
   * not part of how late they run. 0 starts nothing before it is due.
   */
  WORKER_START_AHEAD_MS: z.coerce.number().int().min(0).max(1_000).default(50),
  WORKER_ID: z.string().optional(),
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
});

export const notifierEnvSchema = baseEnvSchema.extend({
  WEBHOOK_RETRY_SCHEDULE: retrySchedule,
  NOTIFIER_CONCURRENCY: z.coerce.number().int().positive().default(32),
  /** How often the notifier looks for webhook events when no wake-up from Postgres (LISTEN) has come. */
  NOTIFIER_OUTBOX_POLL_MS: z.coerce.number().int().min(10).max(600_000).default(1_000),
  /** How often the notifier looks for deliveries no wake-up announced (other notifiers' retries, a killed notifier's expired claims). */
  NOTIFIER_DELIVERY_POLL_MS: z.coerce.number().int().min(10).max(600_000).default(1_000),
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
});

export type BaseEnv = z.infer<typeof baseEnvSchema>;
export type GatewayEnv = z.infer<typeof gatewayEnvSchema>;
export type SchedulerEnv = z.infer<typeof schedulerEnvSchema>;
export type WorkerEnv = z.infer<typeof workerEnvSchema>;
export type NotifierEnv = z.infer<typeof notifierEnvSchema>;

/**
 * Parses the environment once; a bad variable stops the process with its name,
 * instead of failing later somewhere far from the cause.
 */
export function loadEnv<S extends z.ZodType>(schema: S, source: NodeJS.ProcessEnv = process.env): z.infer<S> {
  // Empty strings count as unset, the way shells and compose files usually mean them.
  const cleaned = Object.fromEntries(Object.entries(source).filter(([, v]) => v !== undefined && v !== ""));
  const parsed = schema.safeParse(cleaned);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".") || "(env)"}: ${i.message}`);
    throw new Error(`Invalid environment:\n${lines.join("\n")}`);
  }
  return parsed.data;
}
