/**
 * Apps as real child processes, resolved only once they serve (so a test's
 * SIGTERM reaches a started app, not one still in its start-up), and the
 * operator call every such test starts with.
 */
import { beforeEach, onTestFailed } from "vitest";
import { startApp, waitFor, type AppName, type AppProcess } from "./app-process.js";
import { freePort } from "./free-port.js";
import { createTestRedis, gql, randomSuffix, type TestRedis } from "./platform.js";
import { startTcpProxy, type TcpProxy } from "./tcp-proxy.js";
import { createTestDatabase, type TestDatabase } from "./test-database.js";

export interface GatewayProcess {
  app: AppProcess;
  /** http://127.0.0.1:port/graphql */
  url: string;
}

/** Resolves once `url` answers 2xx; a child that exits or never answers fails the start (and is killed). */
async function serving(app: AppProcess, url: string): Promise<void> {
  try {
    await waitFor(
      `${app.name} at ${url}`,
      async () => {
        if (app.child.exitCode !== null) throw new Error(`${app.name} exited: ${app.output().slice(-2000)}`);
        return (await fetch(url)).ok;
      },
      60_000,
      100,
    );
  } catch (error) {
    app.kill();
    throw error;
  }
}

/** Starts the gateway (as its start script runs it) on a free port and resolves once its /healthz answers 200. */
export async function startGatewayProcess(env: Record<string, string>, adminToken?: string): Promise<GatewayProcess> {
  const port = await freePort();
  const app = startApp("gateway", { ...env, PORT: String(port), HOST: "127.0.0.1", ...(adminToken === undefined ? {} : { ADMIN_TOKEN: adminToken }) });
  await serving(app, `http://127.0.0.1:${port}/healthz`);
  return { app, url: `http://127.0.0.1:${port}/graphql` };
}

/**
 * Starts a scheduler, worker or notifier with its ops server on a free
 * METRICS_PORT and resolves once it answers /livez: the app has finished
 * starting and its SIGTERM drain is in place.
 */
export async function startServingApp(name: Exclude<AppName, "gateway">, env: Record<string, string>): Promise<{ app: AppProcess; port: number }> {
  const port = await freePort();
  const app = startApp(name, { ...env, METRICS_PORT: String(port) });
  await serving(app, `http://127.0.0.1:${port}/livez`);
  return { app, port };
}

/** Call inside a describe: a failing test prints the tail of every app's log, which usually says what went wrong. */
export function printAppLogsOnFailure(apps: readonly AppProcess[], tailChars = 3000): void {
  beforeEach(() => {
    onTestFailed(() => {
      for (const app of apps) console.error(`--- ${app.name} (pid ${app.child.pid}) ---\n${app.output().slice(-tailChars)}`);
    });
  });
}

export interface ProcessTenant {
  tenantId: string;
  apiKey: string;
}

/** createTenant with the operator token (and TenantLimitsInput fields, if given). */
export async function createTenantVia(graphqlUrl: string, adminToken: string, name: string, limits?: Record<string, unknown>): Promise<ProcessTenant> {
  const res = await gql<{ createTenant: { tenant: { id: string }; apiKey: string } }>(
    graphqlUrl,
    `mutation ($i: CreateTenantInput!) { createTenant(input: $i) { tenant { id } apiKey } }`,
    { i: { name, ...(limits ? { limits } : {}) } },
    adminToken,
  );
  const created = res.data?.createTenant;
  if (!created) throw new Error(`createTenant failed: ${JSON.stringify(res.errors)}`);
  return { tenantId: created.tenant.id, apiKey: created.apiKey };
}

/** A gateway process on a database of its own, reaching Redis through a TCP proxy the test can cut. */
export interface RedisProxiedGateway {
  tdb: TestDatabase;
  testRedis: TestRedis;
  proxy: TcpProxy;
  gateway: GatewayProcess;
  adminToken: string;
  stop(): Promise<void>;
}

export async function startGatewayBehindRedisProxy(label: string, env: Record<string, string> = {}): Promise<RedisProxiedGateway> {
  const adminToken = `admin-${randomSuffix(16)}`;
  const tdb = await createTestDatabase(label);
  const testRedis = createTestRedis();
  const proxy = await startTcpProxy("127.0.0.1", Number(new URL(testRedis.url).port || 6379));
  const gateway = await startGatewayProcess(
    { DATABASE_URL: tdb.url, REDIS_URL: proxy.rewrite(testRedis.url), REDIS_KEY_PREFIX: testRedis.prefix, LOG_LEVEL: "warn", ...env },
    adminToken,
  );
  return {
    tdb,
    testRedis,
    proxy,
    gateway,
    adminToken,
    async stop() {
      gateway.app.kill();
      await gateway.app.exited;
      await proxy.close();
      await testRedis.cleanup();
      await tdb.drop();
    },
  };
}
