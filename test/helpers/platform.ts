/**
 * Shared setup for integration tests against real Postgres and Redis.
 * Each test file gets a fresh database (tl_test_<random>) with migrations
 * applied, and its own Redis key prefix (shared DB 0 unless told otherwise);
 * both are removed by the returned cleanup functions.
 */
import { randomBytes } from "node:crypto";
import { gatewayEnvSchema, loadEnv, type GatewayEnv } from "@tasklane/config";
import type { GatewayDeps, GatewayServer } from "@tasklane/gateway";
import { createGatewayServer } from "@tasklane/gateway";
import { Redis } from "ioredis";

const REDIS_BASE = process.env.TEST_REDIS_BASE ?? "redis://127.0.0.1:6379";

// One implementation of "fresh migrated database per file" for the whole suite.
export { createTestDatabase, type TestDatabase } from "./test-database.js";

export function randomSuffix(bytes = 6): string {
  return randomBytes(bytes).toString("hex");
}

export interface TestRedis {
  readonly url: string;
  readonly prefix: string;
  /** Deletes every key under the prefix. */
  cleanup(): Promise<void>;
}

/** Deletes every key matching ARGV[1], atomically (DEL in chunks: Lua's unpack takes a few thousand at most). */
const WIPE_PREFIX = `
local keys = redis.call("KEYS", ARGV[1])
for i = 1, #keys, 1000 do
  redis.call("DEL", unpack(keys, i, math.min(i + 999, #keys)))
end
return #keys`;

/**
 * A unique key prefix on a shared Redis DB (0 by default). Indexes listed in
 * redis-dbs.ts belong to files that FLUSHDB: pass one only if you own it.
 */
export function createTestRedis(dbIndex = 0): TestRedis {
  const prefix = `t${randomSuffix(5)}`;
  const url = `${REDIS_BASE}/${dbIndex}`;
  return {
    url,
    prefix,
    async cleanup() {
      const redis = new Redis(url, { maxRetriesPerRequest: 1 });
      try {
        // In one script, so the keys go at once as with FLUSHDB: tests use this as a Redis wipe, and a
        // SCAN-and-DEL walk of the shared DB under a loaded suite took long enough for the reconciler to
        // rebuild in the middle of it, its restored slots then deleted and its re-added jobs not.
        await redis.eval(WIPE_PREFIX, 0, `${prefix}:*`);
      } finally {
        redis.disconnect();
      }
    },
  };
}

export interface StartedGateway extends GatewayServer {
  readonly env: GatewayEnv;
}

export interface StartGatewayOptions {
  databaseUrl: string;
  redis: TestRedis;
  /** Extra environment, as strings like the real process gets them. */
  env?: Record<string, string>;
  deps?: GatewayDeps;
}

/** Starts the gateway in-process on 127.0.0.1 with an ephemeral port. */
export async function startGateway(opts: StartGatewayOptions): Promise<StartedGateway> {
  const env = loadEnv(gatewayEnvSchema, {
    DATABASE_URL: opts.databaseUrl,
    REDIS_URL: opts.redis.url,
    REDIS_KEY_PREFIX: opts.redis.prefix,
    HOST: "127.0.0.1",
    PORT: "0",
    ADMIN_TOKEN: `admin-${randomSuffix(16)}`,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "silent",
    ...opts.env,
  });
  const server = await createGatewayServer(env, opts.deps);
  return Object.assign(server, { env });
}

export interface GqlError {
  message: string;
  path?: Array<string | number>;
  extensions?: { code?: string; [key: string]: unknown };
}

export interface GqlResponse<T> {
  status: number;
  headers: Headers;
  data: T | null | undefined;
  errors: GqlError[] | undefined;
}

/** POSTs one GraphQL operation; never throws on GraphQL errors (tests assert on them). */
export async function gql<T = Record<string, unknown>>(
  url: string,
  query: string,
  variables?: Record<string, unknown>,
  token?: string,
): Promise<GqlResponse<T>> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await res.json()) as { data?: T | null; errors?: GqlError[] };
  return { status: res.status, headers: res.headers, data: body.data, errors: body.errors };
}

/** A caller of `gateway` as tenant `t` that answers the data and throws on GraphQL errors (for steps that must pass). */
export const asTenant =
  (gateway: StartedGateway, t: { apiKey: string }) =>
  async <T = Record<string, unknown>>(query: string, variables?: Record<string, unknown>): Promise<T> => {
    const res = await gql<T>(gateway.url, query, variables, t.apiKey);
    if (res.errors) throw new Error(JSON.stringify(res.errors));
    return res.data as T;
  };

/** The first error's code, for terse assertions. */
export function codeOf(res: { errors?: GqlError[] | undefined }): string | undefined {
  return res.errors?.[0]?.extensions?.code;
}

export interface CreatedTenant {
  tenantId: string;
  apiKey: string;
  signingSecret: string;
}

/** createTenant through the API with the operator token. */
export async function createTenant(gateway: StartedGateway, name = `tenant-${randomSuffix(3)}`, limits?: Record<string, unknown>): Promise<CreatedTenant> {
  const res = await gql<{ createTenant: { tenant: { id: string }; apiKey: string; signingSecret: string } }>(
    gateway.url,
    `mutation ($input: CreateTenantInput!) { createTenant(input: $input) { tenant { id } apiKey signingSecret } }`,
    { input: { name, ...(limits ? { limits } : {}) } },
    gateway.adminToken,
  );
  const created = res.data?.createTenant;
  if (!created) throw new Error(`createTenant failed: ${JSON.stringify(res.errors)}`);
  return { tenantId: created.tenant.id, apiKey: created.apiKey, signingSecret: created.signingSecret };
}

/** Polls `check` until it returns true or `timeoutMs` passes; returns the elapsed ms. */
export async function waitFor(check: () => Promise<boolean>, timeoutMs: number, intervalMs = 100): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await check()) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
