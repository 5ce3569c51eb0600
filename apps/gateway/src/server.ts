/**
 * createGatewayServer: the whole gateway in-process (main.ts runs it; tests
 * start it on port 0). Owns the connections it opens and closes them on close().
 */
import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { expressMiddleware } from "@as-integrations/express5";
import type { GatewayEnv } from "@tasklane/config";
import { createDatabase, type Database } from "@tasklane/db";
import { ApiTokenBuckets, createKeySpace, createRedis, logRedisErrors, redisTargetOf, type RedisClient } from "@tasklane/queue";
import express from "express";
import { ApiKeyAuthenticator } from "./auth/api-key-authenticator.js";
import { createAuthenticator } from "./auth/authenticate.js";
import { OperatorToken } from "./auth/operator-token.js";
import type { Principal } from "./auth/principal.js";
import { createApollo } from "./graphql/apollo.js";
import type { GatewayContext } from "./graphql/context.js";
import { createContextFactory } from "./graphql/context-factory.js";
import { toGraphQLError } from "./graphql/errors.js";
import { buildGatewaySchema } from "./graphql/schema.js";
import { isStoreUnavailable, storeUnavailableError } from "./graphql/store-unavailable.js";
import { attachWebSockets } from "./graphql/ws.js";
import { graphqlEndpoint, takesGraphqlPost } from "./http/graphql-endpoint.js";
import { MAX_BODY_BYTES, graphqlRequestGuard, httpErrorHandler, internalError, requireUtf8 } from "./http/graphql-guards.js";
import { healthHandler, livenessHandler, metricsHandler } from "./http/health.js";
import { requestScope, scopeOf, type HttpRequestScope } from "./http/request-scope.js";
import { requestBytesAdmission } from "./http/request-bytes-admission.js";
import { ApiRateLimit, operationCount } from "./limits/api-rate-limit.js";
import { BacklogGuard } from "./limits/backlog-guard.js";
import { RequestBytesBudget } from "./limits/request-bytes-budget.js";
import { TenantGate, tenantShare } from "./limits/tenant-concurrency.js";
import { TenantOperations } from "./limits/tenant-operations.js";
import { TenantLimitsCache } from "./limits/tenant-limits-cache.js";
import { createLogger, type Logger } from "./observability/logger.js";
import { tagErrorScope } from "./observability/request-scope.js";
import { createMetrics } from "./observability/metrics.js";
import type { HostResolver } from "./services/outbound-url.js";
import { createServices } from "./services/index.js";
import type { TaskService } from "./services/task-service.js";

export interface GatewayDeps {
  /** Shared connections (not closed by close()); by default the server opens its own. */
  db?: Database;
  redis?: RedisClient;
  logger?: Logger;
  /** Test seams. */
  taskService?: TaskService;
  resolver?: HostResolver;
}

export interface GatewayServer {
  readonly httpServer: http.Server;
  /** http://host:port/graphql */
  readonly url: string;
  /** The operator token in force (generated when env.ADMIN_TOKEN is unset). */
  readonly adminToken: string;
  close(): Promise<void>;
}

export async function createGatewayServer(env: GatewayEnv, deps: GatewayDeps = {}): Promise<GatewayServer> {
  const log = deps.logger ?? createLogger(env.LOG_LEVEL);
  const production = process.env.NODE_ENV === "production";
  const introspection = env.INTROSPECTION ?? !production;
  const adminToken = env.ADMIN_TOKEN ?? randomBytes(32).toString("base64url");
  const db = deps.db ?? createDatabase({ url: env.DATABASE_URL, applicationName: "tasklane-gateway", queryTimeoutMs: env.DATABASE_QUERY_TIMEOUT_SECONDS * 1000 });
  const redis = deps.redis ?? createRedis(redisTargetOf(env), "tasklane-gateway", { log });
  if (deps.redis) logRedisErrors(deps.redis, "tasklane-gateway", log);

  const requestBytes = new RequestBytesBudget({ maxBytes: env.MAX_INFLIGHT_REQUEST_BYTES });
  const metrics = createMetrics({ requestBytesHeld: () => requestBytes.heldBytes });
  const backlog = new BacklogGuard(db, env.GLOBAL_MAX_PENDING_TASKS, log);
  const apiRateLimit = new ApiRateLimit({
    buckets: new ApiTokenBuckets(redis, createKeySpace(env.REDIS_KEY_PREFIX)),
    limits: new TenantLimitsCache(db),
    redis,
    metrics,
    log,
  });
  const apiKeys = new ApiKeyAuthenticator(db, log);
  // Pub/sub needs its own connection; it is always the server's own, even when tests share `redis`.
  const subscriber = createRedis(redisTargetOf(env), "tasklane-gateway-sub", { log });
  const { services, dispatcher, doorbell, hub } = createServices({
    db,
    redis,
    subscriber,
    horizonMs: env.DISPATCH_HORIZON_SECONDS * 1000,
    agingSeconds: env.PRIORITY_AGING_SECONDS,
    redisKeyPrefix: env.REDIS_KEY_PREFIX,
    log,
    metrics,
    authenticator: apiKeys,
    allowPrivateTargets: env.ALLOW_PRIVATE_TARGETS,
    backlog,
    misfireGraceMs: env.SCHEDULE_MISFIRE_GRACE_SECONDS * 1000,
    ...(deps.taskService ? { taskService: deps.taskService } : {}),
    ...(deps.resolver ? { resolver: deps.resolver } : {}),
  });
  const authenticator = createAuthenticator(new OperatorToken(adminToken), apiKeys);
  // Fairness: a tenant runs at most its share of the pool's connections at once; the rest of its operations queue.
  const operations = new TenantOperations(
    new TenantGate({
      share: tenantShare(db.pool.options.max ?? 10, env.TENANT_POOL_SHARE),
      onWait: (delta) => {
        metrics.tenantOperationsWaiting.inc(delta);
        if (delta > 0) metrics.tenantOperationsQueued.inc();
      },
      onRefusal: (reason) => metrics.tenantOperationsRefused.inc({ reason }),
    }),
  );
  const contextFor = createContextFactory(authenticator, services, operations);

  const schema = await buildGatewaySchema();
  const app = express();
  // Plain JSON POSTs to /graphql skip Express (http/graphql-endpoint.ts); the rest is Express's.
  // graphqlPost is defined once Apollo has started, before the server listens.
  const admitBody = requestBytesAdmission({
    budget: requestBytes,
    principalFor: (authorization) => authenticator.principalFor(authorization),
    onRefusal: () => metrics.requestBytesRefused.inc(),
  });
  // Who a request's body was admitted for: its GraphQL context reuses it rather than authenticating twice.
  const admittedAs = new WeakMap<http.IncomingMessage, Principal>();
  const serve = (req: http.IncomingMessage, res: http.ServerResponse) => (takesGraphqlPost(req) ? graphqlPost(req, res) : app(req, res));
  const httpServer = http.createServer((req, res) => {
    admitBody(req, res).then(
      (admission) => {
        if (!admission.admitted) return;
        if (admission.principal) admittedAs.set(req, admission.principal);
        serve(req, res);
      },
      (error: unknown) => internalError(res, undefined, log, error),
    );
  });
  const ws = attachWebSockets({
    schema,
    httpServer,
    contextFor,
    authenticator,
    admit: (principal, operations) => apiRateLimit.admit(principal, operations),
    log,
    introspection,
    errorFormat: { hideSuggestions: production, fallbackLog: log },
    onSlowConsumer: (limit) => metrics.wsSlowConsumerCloses.inc({ limit }),
  });
  const apollo = createApollo({ schema, httpServer, log, metrics, introspection, production, drainWebSockets: ws.dispose });
  await apollo.start();

  /** One request's GraphQL context: who calls (authentication), then the API rate limit, before anything runs. */
  const graphqlContext = async (req: http.IncomingMessage, res: http.ServerResponse, body: unknown, scope: HttpRequestScope): Promise<GatewayContext> => {
    const gone = new AbortController();
    res.on("close", () => {
      if (!res.writableFinished) gone.abort();
    });
    try {
      const context = await contextFor(req.headers.authorization, { ...scope, signal: gone.signal, principal: admittedAs.get(req) });
      // A refused request (429, or 400 for a batch above the burst) did nothing.
      await apiRateLimit.admit(context.principal, operationCount(body));
      return context;
    } catch (error: unknown) {
      // Authentication and the tenant's limits read Postgres: while it is down, 503 OVERLOADED + Retry-After, not a bare 500.
      const refusal = isStoreUnavailable(error) ? toGraphQLError(storeUnavailableError()) : error;
      tagErrorScope(refusal, scope);
      throw refusal;
    }
  };
  const graphqlPost = graphqlEndpoint({ apollo, log, contextFor: graphqlContext });

  app.disable("x-powered-by");
  // Express hashes every response body for a weak ETag (SHA-1 over a 100-task lease's 55 KB: 35-50 us
  // a call). Answers to GraphQL POSTs are never revalidated, so the hash bought nothing.
  app.set("etag", false);
  app.use(requestScope(log));
  // /healthz keeps the contract (200 only with Postgres and Redis); /readyz is the same check under the
  // name orchestrators expect, and /livez the process-only liveness a restart could actually fix.
  app.get("/healthz", healthHandler(db.pool, redis));
  app.get("/readyz", healthHandler(db.pool, redis));
  app.get("/livez", livenessHandler());
  app.get("/metrics", metricsHandler(metrics.registry));
  app.use(
    "/graphql",
    express.json({ limit: MAX_BODY_BYTES, verify: requireUtf8 }),
    graphqlRequestGuard(),
    expressMiddleware(apollo, { context: ({ req, res }) => graphqlContext(req, res, req.body, scopeOf(res)) }),
  );
  app.use((_req, res) => {
    res.status(404).json({ error: "not found" });
  });
  app.use(httpErrorHandler(log));

  await new Promise<void>((resolve, reject) => {
    httpServer.once("error", reject);
    httpServer.listen(env.PORT, env.HOST, () => {
      httpServer.off("error", reject);
      resolve();
    });
  });
  const address = httpServer.address() as AddressInfo;
  const host = env.HOST === "0.0.0.0" || env.HOST === "::" ? "127.0.0.1" : env.HOST;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${address.port}/graphql`;
  log.info({ url }, "gateway listening");
  backlog.start();

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      // Long polls end their wait and answer first (lease-service.ts drain()): otherwise the HTTP drain below
      // waits its whole grace for them and then resets their connections.
      services.leases.drain();
      // Apollo's drain plugins stop accepting, let in-flight requests finish, and close sockets.
      await apollo.stop();
      await backlog.close();
      hub.close();
      doorbell.close();
      // quit() waits for a connection that may never come (Redis down): only a ready client gets a polite QUIT.
      if (!deps.redis) {
        if (redis.status === "ready") await redis.quit().catch(() => redis.disconnect());
        else redis.disconnect();
      }
      if (!deps.db) await db.close();
      log.info("gateway closed");
    })();
    return closing;
  };
  return { httpServer, url, adminToken, close };
}
