/**
 * One platform per workflow test file: a fresh database, Redis DB 0 under its
 * own key prefix (never flushed), a gateway in-process, real scheduler and
 * worker processes (and the notifier if asked), a tenant with a PUSH queue
 * "hooks" (answered by a local receiver) and a PULL queue "pull".
 */
import type { ServerResponse } from "node:http";
import { afterAll, beforeAll, expect } from "vitest";
import { startApp, type AppProcess } from "./app-process.js";
import { startReceiver, type HttpReceiver, type ReceivedRequest } from "./http-receiver.js";
import { createTenant, createTestDatabase, createTestRedis, startGateway, type CreatedTenant, type StartedGateway, type TestDatabase, type TestRedis } from "./platform.js";
import { workflowApi, type WorkflowApi } from "./workflow-api.js";

export interface PushBody {
  taskId: string;
  type: string;
  payload: { add?: number; okFrom?: number } | null;
  attempt: number;
  parents?: Record<string, { value: number } | null>;
}

export const bodyOf = (r: ReceivedRequest) => r.json as PushBody;

/** "add": result value = payload.add + the parents' values; "flaky": 503 before attempt okFrom; "poison": 400. */
function respond(req: ReceivedRequest, res: ServerResponse): void {
  const body = bodyOf(req);
  if (body.type === "poison") return void res.writeHead(400).end("bad input");
  if (body.type === "flaky" && body.attempt < (body.payload?.okFrom ?? 1)) return void res.writeHead(503).end("try later");
  const fromParents = Object.values(body.parents ?? {}).reduce((sum, p) => sum + (p?.value ?? 0), 0);
  res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ value: (body.payload?.add ?? 0) + fromParents }));
}

export interface WorkflowPlatform {
  readonly db: TestDatabase;
  readonly gateway: StartedGateway;
  readonly receiver: HttpReceiver;
  readonly tenant: CreatedTenant;
  readonly api: WorkflowApi;
  /** PUSH requests the receiver got for one task. */
  requestsFor(taskId: string): ReceivedRequest[];
}

export function useWorkflowPlatform(label: string, opts: { notifier?: boolean } = {}): WorkflowPlatform {
  const s: { db?: TestDatabase; redis?: TestRedis; gateway?: StartedGateway; receiver?: HttpReceiver; tenant?: CreatedTenant; apps: AppProcess[] } = { apps: [] };
  const need = <T>(v: T | undefined): T => {
    if (v === undefined) throw new Error("workflow platform is not ready (used outside a test?)");
    return v;
  };
  const api = workflowApi(() => need(s.gateway), () => need(s.tenant).apiKey);
  beforeAll(async () => {
    s.db = await createTestDatabase(label);
    s.redis = createTestRedis();
    s.receiver = await startReceiver(respond);
    const env = { DATABASE_URL: s.db.url, REDIS_URL: s.redis.url, REDIS_KEY_PREFIX: s.redis.prefix, ALLOW_PRIVATE_TARGETS: "1", LOG_LEVEL: "warn" };
    s.gateway = await startGateway({ databaseUrl: s.db.url, redis: s.redis, env: { ALLOW_PRIVATE_TARGETS: "1" } });
    s.apps = [startApp("scheduler", env), startApp("worker", env)];
    if (opts.notifier) s.apps.push(startApp("notifier", { ...env, WEBHOOK_RETRY_SCHEDULE: "1,1,1" }));
    s.tenant = await createTenant(s.gateway);
    for (const q of [{ name: "hooks", mode: "PUSH", endpointUrl: `${s.receiver.url}/run` }, { name: "pull", mode: "PULL" }]) {
      const res = await api.call(`mutation ($i: UpsertQueueInput!) { upsertQueue(input: $i) { name } }`, { i: q });
      expect(res.errors).toBeUndefined();
    }
  });
  afterAll(async () => {
    await Promise.all(s.apps.map((a) => a.stop()));
    await s.gateway?.close();
    await s.receiver?.close();
    await s.redis?.cleanup();
    await s.db?.drop();
  });
  return {
    get db() {
      return need(s.db);
    },
    get gateway() {
      return need(s.gateway);
    },
    get receiver() {
      return need(s.receiver);
    },
    get tenant() {
      return need(s.tenant);
    },
    api,
    requestsFor: (taskId) => need(s.receiver).requests.filter((r) => bodyOf(r).taskId === taskId),
  };
}

/** A PUSH task of the receiver's "add" type. */
export const add = (key: string, n: number, dependsOn: string[] = [], extra: Record<string, unknown> = {}) => ({
  key,
  type: "add",
  queue: "hooks",
  payload: { add: n },
  dependsOn,
  ...extra,
});
