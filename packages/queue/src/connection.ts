import { REPEAT_LOG_INTERVAL_MS, createRepeatThrottle, redisOptionsFromUrl, type Logger } from "@tasklane/config";
import { Cluster, Redis, type ChainableCommander, type RedisOptions } from "ioredis";

/** A standalone Redis or a Redis Cluster: every module takes either (keys are hash-tagged for the cluster). */
export type RedisClient = Redis | Cluster;

/** Runs a pipeline and answers its replies, or throws the first command's error (exec() itself only rejects when the connection fails). */
export async function execPipeline(pipeline: ChainableCommander): Promise<unknown[]> {
  const replies = (await pipeline.exec()) ?? [];
  for (const [error] of replies) if (error) throw error;
  return replies.map(([, reply]) => reply);
}

/** Where Redis is: REDIS_URL alone, or a cluster's seed nodes with REDIS_URL's credentials and TLS. */
export interface RedisTarget {
  url: string;
  clusterNodes?: readonly { host: string; port: number }[] | undefined;
  /** How long a connection may wait for a reply's first byte before it is dropped and made again (REDIS_SOCKET_TIMEOUT_SECONDS). */
  socketTimeoutMs?: number | undefined;
}

/** The target an app's parsed environment names. */
export const redisTargetOf = (env: {
  REDIS_URL: string;
  REDIS_CLUSTER_NODES?: RedisTarget["clusterNodes"];
  REDIS_SOCKET_TIMEOUT_SECONDS?: number | undefined;
}): RedisTarget => ({
  url: env.REDIS_URL,
  clusterNodes: env.REDIS_CLUSTER_NODES,
  socketTimeoutMs: env.REDIS_SOCKET_TIMEOUT_SECONDS === undefined ? undefined : env.REDIS_SOCKET_TIMEOUT_SECONDS * 1000,
});

/**
 * REDIS_SOCKET_TIMEOUT_SECONDS' default. No command of ours blocks on the
 * server (no BLPOP/BZPOPMIN/XREAD BLOCK; subscriptions send no command while
 * they listen), and ioredis arms the timer only while a reply is awaited, so a
 * healthy connection never waits this long: Redis runs a script or a pipeline's
 * command in well under a second, and a pipeline's replies stream back one by one.
 */
export const DEFAULT_REDIS_SOCKET_TIMEOUT_MS = 10_000;

/** Options BullMQ needs on every connection it uses. */
const bullmqReady = (name: string, socketTimeoutMs = DEFAULT_REDIS_SOCKET_TIMEOUT_MS): RedisOptions => ({
  connectionName: name,
  // BullMQ requires this; commands wait for the connection instead of failing after N retries.
  maxRetriesPerRequest: null,
  enableReadyCheck: true,
  // A connection lost without a reset is dropped, and its commands sent again on a new one (ioredis
  // resends the unanswered), instead of waiting for the kernel's retransmissions to end (~15 min).
  socketTimeout: socketTimeoutMs,
});
const reconnectDelay = (times: number) => Math.min(times * 100, 2_000);

/** Where a client reports its connection errors: the app's pino logger. */
export type RedisErrorLog = Pick<Logger, "warn" | "info">;

export interface CreateRedisOptions {
  /**
   * Connection errors are logged here, rate-limited. Every app passes its
   * logger: a client without an `error` listener has ioredis print
   * "[ioredis] Unhandled error event" in plain text, a few times a second
   * while Redis is down.
   */
  log?: RedisErrorLog;
  /** ioredis options on top of the defaults. */
  redis?: RedisOptions;
}

export function createRedis(url: string, name: string, options?: CreateRedisOptions): Redis;
export function createRedis(target: RedisTarget, name: string, options?: CreateRedisOptions): RedisClient;
export function createRedis(target: string | RedisTarget, name: string, options: CreateRedisOptions = {}): RedisClient {
  const client = connect(target, name, options.redis ?? {});
  watchConnection(client);
  pingWhileReady(client, (typeof target === "string" ? undefined : target.socketTimeoutMs) ?? DEFAULT_REDIS_SOCKET_TIMEOUT_MS);
  if (options.log) logRedisErrors(client, name, options.log);
  return client;
}

/**
 * The socket timeout only runs while a reply is awaited, and a subscriber
 * sends nothing while it listens: a subscription the network lost without a
 * reset went silent (the console's live updates, the worker's doorbell and
 * cancel signals) until TCP keepalive gave up, ~11 minutes on. So every client
 * sends a PING this often while it is ready (never otherwise: nothing is added
 * to the offline queue during an outage), and a lost connection is dropped
 * within two intervals. A PING is valid in subscriber mode.
 */
function pingWhileReady(client: RedisClient, everyMs: number): void {
  const timer = setInterval(() => {
    if (client.status === "ready") client.ping().catch(() => undefined);
  }, everyMs);
  timer.unref();
  client.once("end", () => clearInterval(timer));
}

/** Clients connectionLost can tell about: watched from before their first connection was settled. */
const watched = new WeakSet<RedisClient>();
/** Watched clients that have been ready or lost a connection: any connection they make now is a reconnection. */
const pastFirstConnection = new WeakSet<RedisClient>();

/**
 * Lets connectionLost tell a client's first connection from a reconnection.
 * createRedis calls it for every client it makes; modules that take a client
 * made elsewhere call it too (idempotent).
 */
export function watchConnection(client: RedisClient): void {
  if (watched.has(client)) return;
  watched.add(client);
  const { status } = client;
  if (status !== "wait" && status !== "connecting" && status !== "connect") pastFirstConnection.add(client);
  const settled = () => {
    pastFirstConnection.add(client);
    client.off("ready", settled);
    client.off("close", settled);
  };
  client.on("ready", settled);
  client.on("close", settled);
}

/**
 * True while a command sent now would wait in ioredis's offline queue for a
 * connection that is not there: with maxRetriesPerRequest null it waits there
 * for as long as the outage lasts, one more per caller, and all of them are
 * replayed at once when Redis is back. That is every status but "ready",
 * except a first connection's "wait" and "connecting" (moments at start-up,
 * at most connectTimeout, then it counts as lost). "connect" (connected, not
 * yet ready) is lost even the first time: it lasts a round trip, or for as
 * long as a Redis hung or loading its dataset leaves the ready check
 * unanswered. Costs one property read while the client is ready.
 */
export function connectionLost(client: RedisClient): boolean {
  const { status } = client;
  if (status === "ready") return false;
  if (status === "wait" || status === "connecting") return pastFirstConnection.has(client);
  return true;
}

/**
 * A health probe's PING, sent only once the connection is ready: while it is
 * not, a command waits in the offline queue for as long as Redis is away
 * (maxRetriesPerRequest null), one more per probe, every one replayed when
 * Redis is back. It waits up to `waitMs` for the connection to be ready (a
 * first connection's ready check takes a round trip), queueing nothing, and
 * rejects if it is not.
 */
export function pingIfConnected(client: RedisClient, waitMs = 1_000): Promise<unknown> {
  if (client.status === "ready") return client.ping();
  return new Promise((resolve, reject) => {
    const ready = () => {
      clearTimeout(timer);
      client.ping().then(resolve, reject);
    };
    const timer = setTimeout(() => {
      client.off("ready", ready);
      reject(new Error(`redis is ${client.status}`));
    }, waitMs);
    client.once("ready", ready);
  });
}

function connect(target: string | RedisTarget, name: string, extra: RedisOptions): RedisClient {
  const { url, clusterNodes, socketTimeoutMs } = typeof target === "string" ? { url: target, clusterNodes: undefined, socketTimeoutMs: undefined } : target;
  if (!clusterNodes?.length) return new Redis(url, { ...bullmqReady(name, socketTimeoutMs), retryStrategy: reconnectDelay, ...extra });
  const { db, username, password, tls } = redisOptionsFromUrl(url);
  // A cluster has only DB 0: refuse a DB index rather than silently writing somewhere else.
  if (db !== 0) throw new Error(`REDIS_URL names DB ${db}, but a Redis Cluster (REDIS_CLUSTER_NODES) only has DB 0`);
  return new Cluster([...clusterNodes], {
    clusterRetryStrategy: reconnectDelay,
    enableReadyCheck: true,
    redisOptions: { ...bullmqReady(name, socketTimeoutMs), ...(username ? { username } : {}), ...(password ? { password } : {}), ...(tls ? { tls } : {}), ...extra },
  });
}

/** While Redis stays unreachable, one line per connection this often, counting the errors in between. */
export const REDIS_ERROR_LOG_INTERVAL_MS = REPEAT_LOG_INTERVAL_MS;

/**
 * Logs a client's connection errors through `log`: the first at once, then at
 * most one line per REDIS_ERROR_LOG_INTERVAL_MS with the number suppressed (a
 * reconnect fails every 100 ms-2 s), and one line when the connection is back.
 * The message and code only: a stack per failed reconnect tells nothing more.
 */
export function logRedisErrors(client: RedisClient, connection: string, log: RedisErrorLog): void {
  const throttle = createRepeatThrottle(REDIS_ERROR_LOG_INTERVAL_MS);
  client.on("error", (error: unknown) => {
    const line = throttle.failed();
    if (!line) return;
    const detail = error instanceof Error ? { error: error.message, ...("code" in error && typeof error.code === "string" ? { code: error.code } : {}) } : { error: String(error) };
    log.warn({ connection, ...detail, ...(line.suppressed > 0 ? { suppressed: line.suppressed } : {}) }, "redis connection error");
  });
  client.on("ready", () => {
    const line = throttle.recovered();
    if (line) log.info({ connection, ...(line.suppressed > 0 ? { suppressed: line.suppressed } : {}) }, "redis connection restored");
  });
}

/**
 * Resolves at once when the client is not connected, or as soon as it loses
 * its connection. Commands sent meanwhile wait in ioredis's offline queue
 * until Redis is back (maxRetriesPerRequest: null), so a shutdown races this
 * against whatever waits on Redis instead of waiting for Redis.
 */
export function untilUnreachable(client: RedisClient): Promise<void> {
  if (client.status !== "ready") return Promise.resolve();
  return new Promise((resolve) => {
    const lost = () => {
      client.off("close", lost);
      client.off("end", lost);
      resolve();
    };
    client.on("close", lost);
    client.on("end", lost);
  });
}
