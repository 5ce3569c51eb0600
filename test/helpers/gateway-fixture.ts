/**
 * One database, one Redis prefix and one gateway for a test file:
 * `const platform = useGateway();` inside a describe, then platform.gateway etc.
 */
import { afterAll, beforeAll } from "vitest";
import { createTestDatabase, createTestRedis, startGateway, type StartGatewayOptions, type StartedGateway, type TestDatabase, type TestRedis } from "./platform.js";
import { startTcpProxy, type TcpProxy } from "./tcp-proxy.js";

export interface GatewayFixture {
  readonly database: TestDatabase;
  readonly redis: TestRedis;
  readonly gateway: StartedGateway;
  /** Another gateway on the same database and Redis, closed with the fixture. */
  startAnother(opts?: Omit<StartGatewayOptions, "databaseUrl" | "redis">): Promise<StartedGateway>;
}

function need<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`${what} is not ready (used outside a test?)`);
  return value;
}

export function useGateway(opts: Omit<StartGatewayOptions, "databaseUrl" | "redis"> = {}): GatewayFixture {
  const extra: StartedGateway[] = [];
  const state: { database?: TestDatabase; redis?: TestRedis; gateway?: StartedGateway } = {};
  beforeAll(async () => {
    state.database = await createTestDatabase("gw");
    state.redis = createTestRedis();
    state.gateway = await startGateway({ ...opts, databaseUrl: state.database.url, redis: state.redis });
  });
  afterAll(async () => {
    await Promise.all(extra.map((g) => g.close()));
    await state.gateway?.close();
    await state.redis?.cleanup();
    await state.database?.drop();
  });
  return {
    get database() {
      return need(state.database, "database");
    },
    get redis() {
      return need(state.redis, "redis");
    },
    get gateway() {
      return need(state.gateway, "gateway");
    },
    async startAnother(more = {}) {
      const g = await startGateway({ ...more, databaseUrl: need(state.database, "database").url, redis: need(state.redis, "redis") });
      extra.push(g);
      return g;
    },
  };
}

export interface ProxiedGatewayFixture {
  readonly database: TestDatabase;
  /** Between the gateway and Postgres: cut() or hang() it to take Postgres away from the gateway alone. */
  readonly proxy: TcpProxy;
  readonly gateway: StartedGateway;
}

/**
 * One database, one Redis prefix and one gateway for a test file, the
 * gateway reaching Postgres through a TCP proxy of its own (the test itself
 * reads the database directly).
 */
export function useGatewayBehindPostgresProxy(label = "gwproxy"): ProxiedGatewayFixture {
  const state: { database?: TestDatabase; redis?: TestRedis; proxy?: TcpProxy; gateway?: StartedGateway } = {};
  beforeAll(async () => {
    state.database = await createTestDatabase(label);
    state.redis = createTestRedis();
    state.proxy = await startTcpProxy("127.0.0.1", Number(new URL(state.database.url).port || 5432));
    state.gateway = await startGateway({ databaseUrl: state.proxy.rewrite(state.database.url), redis: state.redis });
  });
  afterAll(async () => {
    await state.gateway?.close();
    await state.proxy?.close();
    await state.redis?.cleanup();
    await state.database?.drop();
  });
  return {
    get database() {
      return need(state.database, "database");
    },
    get proxy() {
      return need(state.proxy, "proxy");
    },
    get gateway() {
      return need(state.gateway, "gateway");
    },
  };
}
