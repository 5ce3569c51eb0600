import { redisOptionsFromUrl } from "@tasklane/config";
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
}

/** The target an app's parsed environment names. */
export const redisTargetOf = (env: { REDIS_URL: string; REDIS_CLUSTER_NODES?: RedisTarget["clusterNodes"] }): RedisTarget => ({
  url: env.REDIS_URL,
  clusterNodes: env.REDIS_CLUSTER_NODES,
});

/** Options BullMQ needs on every connection it uses. */
const bullmqReady = (name: string): RedisOptions => ({
  connectionName: name,
  // BullMQ requires this; commands wait for the connection instead of failing after N retries.
  maxRetriesPerRequest: null,
  enableReadyCheck: true,
});
const reconnectDelay = (times: number) => Math.min(times * 100, 2_000);

export function createRedis(url: string, name: string, extra?: RedisOptions): Redis;
export function createRedis(target: RedisTarget, name: string, extra?: RedisOptions): RedisClient;
export function createRedis(target: string | RedisTarget, name: string, extra: RedisOptions = {}): RedisClient {
  const { url, clusterNodes } = typeof target === "string" ? { url: target, clusterNodes: undefined } : target;
  if (!clusterNodes?.length) return new Redis(url, { ...bullmqReady(name), retryStrategy: reconnectDelay, ...extra });
  const { db, username, password, tls } = redisOptionsFromUrl(url);
  // A cluster has only DB 0: refuse a DB index rather than silently writing somewhere else.
  if (db !== 0) throw new Error(`REDIS_URL names DB ${db}, but a Redis Cluster (REDIS_CLUSTER_NODES) only has DB 0`);
  return new Cluster([...clusterNodes], {
    clusterRetryStrategy: reconnectDelay,
    enableReadyCheck: true,
    redisOptions: { ...bullmqReady(name), ...(username ? { username } : {}), ...(password ? { password } : {}), ...(tls ? { tls } : {}), ...extra },
  });
}
