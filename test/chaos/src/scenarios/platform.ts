/** The usual setup of a scenario: a cluster, the tenants' endpoint, a tenant with a PUSH queue. */
import type { AppProcess } from "../lib/apps.js";
import { Cluster, type ClusterOptions, type Tenant } from "../lib/cluster.js";
import { startEndpoint, type Endpoint, type ItemOf } from "../lib/endpoint.js";
import type { ScenarioContext } from "./scenario.js";

export interface PushPlatform {
  cluster: Cluster;
  endpoint: Endpoint;
  tenant: Tenant;
  workers: AppProcess[];
}

export interface PushPlatformOptions extends Omit<ClusterOptions, "history" | "label"> {
  label: string;
  workers: number;
  workerConcurrency: number;
  schedulers?: number;
  notifier?: boolean;
  endpointDelayMs?: number;
  itemOf?: ItemOf;
}

/** Starts everything, runs `body`, and always tears down what it started. */
export async function withPushPlatform<T>(ctx: ScenarioContext, opts: PushPlatformOptions, body: (p: PushPlatform) => Promise<T>): Promise<T> {
  const cluster = await Cluster.start({ label: opts.label, history: ctx.history, ...(opts.ownPostgres ? { ownPostgres: true } : {}), ...(opts.env ? { env: opts.env } : {}) });
  const endpoint = await startEndpoint({ history: ctx.history, ...(opts.endpointDelayMs !== undefined ? { delayMs: opts.endpointDelayMs } : {}), ...(opts.itemOf ? { itemOf: opts.itemOf } : {}) });
  try {
    await cluster.startGateway();
    const [workers] = await Promise.all([
      Promise.all(Array.from({ length: opts.workers }, () => cluster.start("worker", { WORKER_CONCURRENCY: String(opts.workerConcurrency) }))),
      Promise.all(Array.from({ length: opts.schedulers ?? 1 }, () => cluster.start("scheduler"))),
      opts.notifier ? cluster.start("notifier") : Promise.resolve(undefined),
    ]);
    const tenant = await cluster.createTenant(`${opts.label}-tenant`);
    await cluster.upsertQueue(tenant, { name: "push", mode: "PUSH", endpointUrl: `${endpoint.url}/task` });
    ctx.log(`platform up: ${opts.workers} worker(s), ${opts.schedulers ?? 1} scheduler(s)${opts.ownPostgres ? ", own PostgreSQL" : ""}, own redis-server :${cluster.redis.port}`);
    return await body({ cluster, endpoint, tenant, workers });
  } finally {
    for (const exit of cluster.unexpectedExits()) ctx.log(`${exit.id} exited on its own:\n${exit.output}`);
    await endpoint.close();
    await cluster.close();
  }
}

export const range = (n: number) => Array.from({ length: n }, (_, i) => i);
export const pick = <T>(xs: T[]): T => xs[Math.floor(Math.random() * xs.length)]!;
