import { z } from "zod";
import { REDIS_DEFAULT_DATABASES, redisOptionsFromUrl } from "./redis-url.js";

/*
 * Environment shared by every app; each app parses it once at start. Every
 * variable is read strictly: a value the schema cannot read stops the process
 * (see loadEnvOrExit) rather than being coerced into something else
 * (z.coerce.number() reads " " as 0, which listened on a random port).
 */

interface NumberBounds {
  integer?: boolean;
  /** Strictly greater than 0. */
  positive?: boolean;
  min?: number;
  max?: number;
}

/** "an integer from 0 to 65535", "a number > 0", … : what the operator must write. */
function describeNumber({ integer = false, positive = false, min, max }: NumberBounds): string {
  const kind = integer ? "an integer" : "a number";
  if (positive) return max === undefined ? `${kind} > 0` : `${kind} > 0 and <= ${max}`;
  if (min !== undefined && max !== undefined) return `${kind} from ${min} to ${max}`;
  if (min !== undefined) return `${kind} >= ${min}`;
  if (max !== undefined) return `${kind} <= ${max}`;
  return kind;
}

const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/** A decimal number, or undefined: Number() would also take "", " ", "0x10" and "Infinity". */
function readNumber(text: string): number | undefined {
  const trimmed = text.trim();
  if (!DECIMAL.test(trimmed)) return undefined;
  const n = Number(trimmed);
  return Number.isFinite(n) ? n : undefined;
}

/** A numeric variable within bounds; one message says what is expected, whichever check failed. */
export function numberVar(bounds: NumberBounds = {}) {
  const expected = `expected ${describeNumber(bounds)}`;
  return z.string().transform((raw, ctx) => {
    const n = readNumber(raw);
    const ok =
      n !== undefined &&
      (!bounds.integer || Number.isInteger(n)) &&
      (!bounds.positive || n > 0) &&
      (bounds.min === undefined || n >= bounds.min) &&
      (bounds.max === undefined || n <= bounds.max);
    if (!ok) {
      ctx.addIssue({ code: "custom", message: expected });
      return z.NEVER;
    }
    return n;
  });
}

const port = () => numberVar({ integer: true, min: 0, max: 65535 });

const booleanFlag = (fallback: "0" | "1") =>
  z
    .enum(["0", "1", "true", "false"], { error: "expected 0, 1, true or false" })
    .default(fallback)
    .transform((v) => v === "1" || v === "true");

/** Seconds between attempts, e.g. "5,30,120": every part a number, none empty ("1,,3" is a typo, not a 0). */
const retrySchedule = z
  .string()
  .default("5,30,120,600,3600,21600")
  .transform((s, ctx) => {
    const parts = s.split(",").map(readNumber);
    if (parts.some((n) => n === undefined || n < 0)) {
      ctx.addIssue({ code: "custom", message: "expected comma-separated non-negative seconds, e.g. 5,30,120" });
      return z.NEVER;
    }
    return parts as number[];
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

const urlVar = (protocols: readonly string[], example: string) =>
  z.string().refine((s) => protocols.includes(URL.parse(s)?.protocol ?? ""), { error: `expected a URL like ${example}`, abort: true });

/**
 * REDIS_URL: its DB index is checked here, before any connection: ioredis
 * would SELECT "abc" as NaN (a ReplyError that crashed the gateway) and a DB
 * the server does not have only as warnings while the app ran on.
 */
const redisUrl = urlVar(["redis:", "rediss:"], "redis://127.0.0.1:6379/0").superRefine((s, ctx) => {
  try {
    const { db } = redisOptionsFromUrl(s);
    if (db >= REDIS_DEFAULT_DATABASES) {
      ctx.addIssue({ code: "custom", message: `DB index ${db} is out of range: Redis has DBs 0 to ${REDIS_DEFAULT_DATABASES - 1}` });
    }
  } catch {
    ctx.addIssue({ code: "custom", message: "the DB index (the path) must be an integer from 0 to 15" });
  }
});

export const baseEnvSchema = z.object({
  DATABASE_URL: urlVar(["postgresql:", "postgres:"], "postgresql://user@host:5432/tasklane").default("postgresql://postgres@127.0.0.1:5432/tasklane"),
  REDIS_URL: redisUrl.default("redis://127.0.0.1:6379/0"),
  /**
   * Seed nodes of a Redis Cluster; when set every app connects to the cluster
   * and REDIS_URL only supplies the credentials and TLS (its DB index must be 0).
   */
  REDIS_CLUSTER_NODES: clusterNodes.optional(),
  /**
   * A Redis connection waiting this long for any byte of a reply is dropped and
   * made again. A connection the network lost without a reset (a failover, a
   * NAT or firewall forgetting it) otherwise looks ready while its commands
   * wait for TCP to give up: ~15 minutes of retransmissions on Linux.
   */
  REDIS_SOCKET_TIMEOUT_SECONDS: numberVar({ min: 0.5, max: 600 }).default(10),
  LOG_LEVEL: z
    .enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"], { error: "expected one of fatal, error, warn, info, debug, trace, silent" })
    .default("info"),
  ALLOW_PRIVATE_TARGETS: booleanFlag("0"),
  /** Prefix of every Redis key this deployment owns (tests give each file its own). */
  REDIS_KEY_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,32}$/, { error: "expected 1 to 32 of A-Z a-z 0-9 _ -" })
    .default("tl"),
  /** Tasks due within this horizon are placed in Redis's delayed set; later ones stay in Postgres. */
  DISPATCH_HORIZON_SECONDS: numberVar({ positive: true, max: 86_400 }).default(300),
  /** A task waiting longer than this counts one priority lane higher (starvation guard). */
  PRIORITY_AGING_SECONDS: numberVar({ positive: true }).default(60),
});

/** Platform protection: pending tasks across all tenants past which submissions get OVERLOADED and cron runs are SKIPPED. */
const globalMaxPendingTasks = numberVar({ integer: true, positive: true }).default(5_000_000);
/** How late a cron occurrence may fire and still count as on time rather than missed (scheduler; the gateway's schedule changes alike). */
const scheduleMisfireGrace = numberVar({ min: 0 }).default(30);

/**
 * A Postgres statement not answered within this long fails and its connection
 * is dropped (the pool makes a new one). A connection the network lost without
 * a reset (a failover, a NAT or firewall forgetting it) otherwise holds its
 * statement until TCP gives up (~15 minutes of retransmissions on Linux, for
 * ever to a peer that acknowledges), and each such statement keeps a pool
 * connection: the scheduler's loops and the worker's starts and completions
 * stopped for that long, and the gateway and notifier, whose pools filled
 * with such connections, stayed unready and served nothing after the network
 * was back. Far above any statement of theirs (batches of milliseconds; a row
 * lock held by a frozen session ends within 10 s).
 */
const databaseQueryTimeout = numberVar({ min: 1, max: 3_600 }).default(30);

export const gatewayEnvSchema = baseEnvSchema.extend({
  DATABASE_QUERY_TIMEOUT_SECONDS: databaseQueryTimeout,
  PORT: port().default(4000),
  HOST: z.string().default("0.0.0.0"),
  ADMIN_TOKEN: z.string().min(16, { error: "expected at least 16 characters" }).optional(),
  /** GraphQL introspection for authenticated callers; unset means on, except when NODE_ENV=production. */
  INTROSPECTION: z
    .enum(["0", "1", "true", "false"], { error: "expected 0, 1, true or false" })
    .optional()
    .transform((v) => (v === undefined ? undefined : v === "1" || v === "true")),
  GLOBAL_MAX_PENDING_TASKS: globalMaxPendingTasks,
  /**
   * Fairness between tenants: the fraction of this gateway's Postgres pool one tenant's operations may
   * use at once (rounded up, at least 2: 3 of 10 by default); its further operations wait their turn.
   */
  TENANT_POOL_SHARE: numberVar({ positive: true, max: 1 }).default(0.25),
  /**
   * Memory protection: bytes of request bodies this gateway holds at once (one tenant at most half,
   * callers without a valid credential 1 MiB together); past it requests answer 503 OVERLOADED before
   * their body is read. A body is held several times over
   * while it is served, so keep it near a thirtieth of the gateway's memory limit (32 MiB for 1 GiB); at least
   * 16 MiB, so that half of it holds the largest body (8 MiB) twice.
   */
  MAX_INFLIGHT_REQUEST_BYTES: numberVar({ integer: true, min: 16 * 1024 * 1024 }).default(32 * 1024 * 1024),
  /** As the scheduler's: updateSchedule and deleteSchedule fire the occurrences already due as it would. */
  SCHEDULE_MISFIRE_GRACE_SECONDS: scheduleMisfireGrace,
});

/**
 * The interface the background apps' ops server (/metrics, /healthz, /readyz)
 * listens on. Unset: every interface, IPv4 and IPv6 alike, because a kubelet's
 * probes and a Prometheus in another container reach it on the pod's address
 * (and `npm start` and the tests on 127.0.0.1). Set 127.0.0.1 on a shared
 * host where the endpoint must not be reachable from outside.
 */
const metricsHost = z
  .string()
  .regex(/^[A-Za-z0-9.:%_-]+$/, { error: "expected an IP address or a host name" })
  .optional();

export const schedulerEnvSchema = baseEnvSchema.extend({
  DATABASE_QUERY_TIMEOUT_SECONDS: databaseQueryTimeout,
  RECONCILE_INTERVAL_SECONDS: numberVar({ positive: true }).default(15),
  SCHEDULE_MISFIRE_GRACE_SECONDS: scheduleMisfireGrace,
  /** The gateway's platform cap, which cron runs answer to as well (db's PlatformBacklogReading, refreshed by the scheduler's backlog loop). */
  GLOBAL_MAX_PENDING_TASKS: globalMaxPendingTasks,
  METRICS_PORT: port().optional(),
  METRICS_HOST: metricsHost,
  /**
   * Adds tenant and queue labels to the queue-depth gauges. Off by default:
   * series grow with tenants × queues, which only small deployments can afford.
   */
  METRICS_TENANT_LABELS: booleanFlag("0"),
  /** Finished tasks (with their attempts and audit events) are deleted this many days after completion; 0 keeps them forever. */
  TASK_RETENTION_DAYS: numberVar({ min: 0 }).default(30),
  /** How often the retention job looks for tasks past TASK_RETENTION_DAYS. */
  RETENTION_PRUNE_INTERVAL_SECONDS: numberVar({ positive: true }).default(60),
});

export const workerEnvSchema = baseEnvSchema.extend({
  DATABASE_QUERY_TIMEOUT_SECONDS: databaseQueryTimeout,
  WORKER_CONCURRENCY: numberVar({ integer: true, positive: true, max: 10_000 }).default(100),
  /**
   * Delayed and retrying tasks are started this many ms before their runAt and
   * their request is sent at runAt, so the fetch and the start statement are
   * not part of how late they run. 0 starts nothing before it is due.
   */
  WORKER_START_AHEAD_MS: numberVar({ integer: true, min: 0, max: 1_000 }).default(50),
  /**
   * After SIGTERM, how long in-flight PUSH attempts get to finish and be
   * recorded; those still out then are handed back uncharged. The process's
   * deadline is this plus 10 s: an orchestrator's grace (Kubernetes
   * terminationGracePeriodSeconds) must be longer.
   */
  WORKER_DRAIN_GRACE_SECONDS: numberVar({ min: 0, max: 3_600 }).default(30),
  WORKER_ID: z.string().optional(),
  METRICS_PORT: port().optional(),
  METRICS_HOST: metricsHost,
});

export const notifierEnvSchema = baseEnvSchema.extend({
  DATABASE_QUERY_TIMEOUT_SECONDS: databaseQueryTimeout,
  WEBHOOK_RETRY_SCHEDULE: retrySchedule,
  NOTIFIER_CONCURRENCY: numberVar({ integer: true, positive: true }).default(32),
  /** How often the notifier looks for webhook events when no wake-up from Postgres (LISTEN) has come. */
  NOTIFIER_OUTBOX_POLL_MS: numberVar({ integer: true, min: 10, max: 600_000 }).default(1_000),
  /** How often the notifier looks for deliveries no wake-up announced (other notifiers' retries, a killed notifier's expired claims). */
  NOTIFIER_DELIVERY_POLL_MS: numberVar({ integer: true, min: 10, max: 600_000 }).default(1_000),
  METRICS_PORT: port().optional(),
  METRICS_HOST: metricsHost,
});

export type BaseEnv = z.infer<typeof baseEnvSchema>;
export type GatewayEnv = z.infer<typeof gatewayEnvSchema>;
export type SchedulerEnv = z.infer<typeof schedulerEnvSchema>;
export type WorkerEnv = z.infer<typeof workerEnvSchema>;
export type NotifierEnv = z.infer<typeof notifierEnvSchema>;

/** Variables whose value is never repeated back, even when it is wrong. */
const SECRET_VARIABLES = new Set(["ADMIN_TOKEN", "NEXTAUTH_SECRET"]);

/** A value as an error may show it: secrets withheld, a URL's password masked. */
function shown(name: string, value: string): string {
  if (SECRET_VARIABLES.has(name)) return "(value withheld)";
  return JSON.stringify(value.replace(/(\/\/[^/@:]*:)[^@/]*@/, "$1***@"));
}

/** One problem per bad variable: its name, what was expected and what it got. */
export interface ConfigProblem {
  variable: string;
  message: string;
}

/** The environment could not be read; `problems` names every bad variable. */
export class ConfigError extends Error {
  constructor(readonly problems: readonly ConfigProblem[]) {
    super(problems.map((p) => `${p.variable}: ${p.message}`).join("; "));
    this.name = "ConfigError";
  }
}

/**
 * Parses the environment once; a bad variable throws a ConfigError naming it,
 * instead of failing later somewhere far from the cause.
 */
export function loadEnv<S extends z.ZodType>(schema: S, source: NodeJS.ProcessEnv = process.env): z.infer<S> {
  // Empty strings count as unset, the way shells and compose files usually mean them.
  const cleaned = Object.fromEntries(Object.entries(source).filter(([, v]) => v !== undefined && v !== "")) as Record<string, string>;
  const parsed = schema.safeParse(cleaned);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue): ConfigProblem => {
    const variable = issue.path.map(String).join(".") || "(env)";
    const raw = cleaned[variable];
    return { variable, message: raw === undefined ? issue.message : `${issue.message}, got ${shown(variable, raw)}` };
  });
  throw new ConfigError(problems);
}

/**
 * What an app's start does with its environment: parsed, or one line on stderr
 * (`tasklane-worker: invalid configuration: PORT: expected …, got "abc"`) and
 * exit code 1. An operator needs the variable and the reason, not a stack.
 */
export function loadEnvOrExit<S extends z.ZodType>(schema: S, program: string, source: NodeJS.ProcessEnv = process.env): z.infer<S> {
  try {
    return loadEnv(schema, source);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    exitWithMessage(program, `invalid configuration: ${error.message}`);
  }
}

/** One line on stderr and exit code 1: for start-up failures an operator fixes by hand. */
export function exitWithMessage(program: string, message: string): never {
  process.stderr.write(`${program}: ${message.replace(/\s*\n\s*/g, " ")}\n`);
  process.exit(1);
}

/** An error and its causes as one line: "Migration x failed: relation "y" already exists". */
export function errorChain(error: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = error, depth = 0; e !== undefined && depth < 5; depth++) {
    if (e instanceof AggregateError && e.message === "" && e.errors.length > 0) e = e.errors[0];
    parts.push(e instanceof Error ? e.message || e.name : String(e));
    e = e instanceof Error ? e.cause : undefined;
  }
  return parts.join(": ");
}
