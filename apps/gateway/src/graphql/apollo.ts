/** Apollo Server with the gateway's hardening and plugins. */
import type http from "node:http";
import { ApolloServer, type ApolloServerPlugin } from "@apollo/server";
import { ApolloServerPluginDrainHttpServer } from "@apollo/server/plugin/drainHttpServer";
import { ApolloServerPluginCacheControlDisabled, ApolloServerPluginLandingPageDisabled } from "@apollo/server/plugin/disabled";
import type { GraphQLSchema } from "graphql";
import type { Logger } from "../observability/logger.js";
import type { GatewayMetrics } from "../observability/metrics.js";
import { compiledExecutionGateway } from "./compiled-execution.js";
import type { GatewayContext } from "./context.js";
import { formatError } from "./errors.js";
import { errorScope } from "./plugins/error-scope.js";
import { introspectionGuard } from "./plugins/introspection-guard.js";
import { throttleHttpStatus } from "./plugins/http-status.js";
import { queryCostGuard } from "./plugins/query-cost.js";
import { requestMetrics } from "./plugins/request-metrics.js";
import { responseMediaType } from "./plugins/response-media-type.js";
import { textGuard } from "./plugins/text-guard.js";
import { QueryLimitsRule } from "./validation/query-limits.js";

export interface ApolloOptions {
  schema: GraphQLSchema;
  httpServer: http.Server;
  log: Logger;
  metrics: GatewayMetrics;
  introspection: boolean;
  production: boolean;
  /** Stops the WebSocket server as part of Apollo's drain. */
  drainWebSockets: () => Promise<void>;
}

export function createApollo(opts: ApolloOptions): ApolloServer<GatewayContext> {
  const drainWs: ApolloServerPlugin<GatewayContext> = {
    async serverWillStart() {
      return { drainServer: opts.drainWebSockets };
    },
  };
  return new ApolloServer<GatewayContext>({
    // Our own schema, executed compiled (compiled-execution.ts): Apollo's one way to bring an executor.
    gateway: compiledExecutionGateway(opts.schema),
    introspection: opts.introspection,
    includeStacktraceInErrorResponses: false,
    hideSchemaDetailsFromClientErrors: opts.production,
    allowBatchedHttpRequests: true,
    // APQ answers PERSISTED_QUERY_NOT_FOUND, which is not a contract code, and keeps an in-memory cache per instance.
    persistedQueries: false,
    // main.ts owns SIGTERM/SIGINT: Apollo's own handlers would race it and re-raise the signal.
    stopOnTerminationSignals: false,
    validationRules: [QueryLimitsRule],
    // Apollo's default pretty-prints every response (two-space indent): a 500-task
    // answer then costs a third more to write and to send, for no client that parses it.
    stringifyResult: (result) => JSON.stringify(result),
    formatError: (formatted, error) => formatError(formatted, error, { hideSuggestions: opts.production, fallbackLog: opts.log }),
    logger: opts.log,
    plugins: [
      ApolloServerPluginDrainHttpServer({ httpServer: opts.httpServer }),
      // The default landing page loads Apollo's hosted sandbox; a self-hosted API should not.
      ApolloServerPluginLandingPageDisabled(),
      // We send no cache hints; the default cache-control plugin would still wrap every field
      // resolver (willResolveField), a measurable cost on 500-task batches (npm run bench).
      ApolloServerPluginCacheControlDisabled(),
      drainWs,
      errorScope(),
      introspectionGuard(),
      queryCostGuard(),
      textGuard(),
      throttleHttpStatus(),
      responseMediaType(),
      requestMetrics(opts.metrics),
    ],
  });
}
