/**
 * graphql-ws on the same path as HTTP. Auth comes from connectionParams
 * { authorization: "Bearer …" }: checked at connection_init, where a missing
 * or invalid credential closes the socket with 4401 "Unauthorized" (the
 * client learns why at once, and graphql-ws clients do not retry that code),
 * again per operation, and for as long as the socket is open
 * (socket-credentials.ts): a key revoked or expired closes its sockets with
 * the same 4401 within seconds, ending their subscriptions. Every operation
 * gets its own context and requestId, HTTP's validation rules and HTTP's
 * error formatting.
 */
import { randomUUID } from "node:crypto";
import type http from "node:http";
import { UnauthenticatedError } from "@tasklane/core";
import {
  GraphQLError,
  NoSchemaIntrospectionCustomRule,
  execute,
  type ExecutionArgs,
  type ExecutionResult,
  getOperationAST,
  parse,
  specifiedRules,
  validate,
  type DocumentNode,
  type GraphQLSchema,
  type ValidationRule,
} from "graphql";
import { useServer } from "graphql-ws/use/ws";
import { WebSocketServer } from "ws";
import type { Authenticator } from "../auth/authenticate.js";
import type { Principal } from "../auth/principal.js";
import { MAX_DOCUMENT_BYTES } from "../http/graphql-guards.js";
import type { Logger } from "../observability/logger.js";
import { EventExecutions, subscribeWithin } from "../realtime/event-executions.js";
import { SocketOutputLimit, type OutputLimitKind } from "../realtime/socket-output-limit.js";
import type { ContextFactory } from "./context-factory.js";
import type { GatewayContext } from "./context.js";
import { formatError, toGraphQLError, type ErrorFormatOptions } from "./errors.js";
import { SocketCredentials } from "./socket-credentials.js";
import { MAX_SOCKETS_PER_TENANT, SocketQuotas } from "./socket-quotas.js";
import { usesIntrospection } from "./plugins/introspection-guard.js";
import { costRefusal } from "./plugins/query-cost.js";
import { QueryLimitsRule } from "./validation/query-limits.js";
import { textRefusal } from "./validation/text-values.js";

export interface WsOptions {
  schema: GraphQLSchema;
  httpServer: http.Server;
  contextFor: ContextFactory;
  /** Re-checks open sockets' credentials (the one contextFor uses). */
  authenticator: Authenticator;
  /** The tenant's API rate limit, as over HTTP: every operation a socket starts is one call. Throws the refusal. */
  admit: (principal: Principal, operations: number) => Promise<void>;
  log: Logger;
  introspection: boolean;
  errorFormat: ErrorFormatOptions;
  /** A socket was closed for having too much waiting to be sent (socket-output-limit.ts). */
  onSlowConsumer?(limit: OutputLimitKind): void;
}

/** Marks a parse/validation failure the way Apollo does, so formatError maps it to BAD_USER_INPUT. */
function requestError(error: GraphQLError): GraphQLError {
  return new GraphQLError(error.message, { nodes: error.nodes ?? null, extensions: { code: "GRAPHQL_VALIDATION_FAILED" } });
}

/** Close code for a connection without a valid credential (graphql-ws's own CloseCode.Unauthorized). */
export const WS_UNAUTHORIZED = 4401;

/** Close code for a tenant already holding its share of sockets (socket-quotas.ts). */
export const WS_TOO_MANY_SOCKETS = 4429;

/** With the key cache's 2 s, a revoked or expired key's sockets close within ~7 s. */
const CREDENTIAL_CHECK_MS = 5_000;

function isGatewayContext(value: unknown): value is GatewayContext {
  return typeof value === "object" && value !== null && "requestId" in value && "principal" in value;
}

type OperationResult = ExecutionResult | AsyncGenerator<ExecutionResult, void, void>;
type Operation = (args: ExecutionArgs) => OperationResult | Promise<OperationResult>;

function withinShare(args: ExecutionArgs, operation: Operation): ReturnType<Operation> {
  const context = args.contextValue;
  if (!isGatewayContext(context) || context.operations === undefined) return operation(args);
  return context.operations.run<OperationResult>(context.principal, () => operation(args), (error) => ({ errors: [error] }));
}

export function attachWebSockets(opts: WsOptions): { dispose(): Promise<void> } {
  const wsServer = new WebSocketServer({ server: opts.httpServer, path: "/graphql", maxPayload: 2 * MAX_DOCUMENT_BYTES });
  const rules: ValidationRule[] = [...specifiedRules, QueryLimitsRule, ...(opts.introspection ? [] : [NoSchemaIntrospectionCustomRule])];
  const format = (errors: readonly GraphQLError[], contextValue: unknown) => {
    const scope = isGatewayContext(contextValue) ? { requestId: contextValue.requestId, log: contextValue.log } : undefined;
    return errors.map((e) => formatError(e.toJSON(), e, opts.errorFormat, scope));
  };
  const credentials = new SocketCredentials({
    authenticator: opts.authenticator,
    closeCode: WS_UNAUTHORIZED,
    closeReason: "Unauthorized",
    intervalMs: CREDENTIAL_CHECK_MS,
    log: opts.log,
  });
  const quotas = new SocketQuotas();
  const executions = new EventExecutions();
  const tenantOf = (args: ExecutionArgs) => {
    const context = args.contextValue;
    return isGatewayContext(context) && context.principal.kind === "tenant" ? context.principal.tenantId : "";
  };
  const outputLimit = new SocketOutputLimit({
    onClose(limit, bufferedBytes) {
      opts.onSlowConsumer?.(limit);
      opts.log.warn({ limit, bufferedBytes }, "closed a WebSocket whose reader fell behind (1013): too much waiting to be sent");
    },
  });

  const cleanup = useServer<Record<string, unknown> | undefined>(
    {
      schema: opts.schema,
      async onConnect(ctx) {
        const requestId = `ws-connect-${randomUUID()}`;
        const { principal } = await opts.contextFor(ctx.connectionParams?.authorization, { requestId, log: opts.log.child({ requestId }) });
        // Gone while its credential was checked: its close event has passed, and a socket registered
        // now would never leave the tenant's count.
        if (ctx.extra.socket.readyState !== ctx.extra.socket.OPEN) return false;
        if (principal.kind === "tenant") {
          if (!quotas.open(principal.tenantId, ctx)) {
            ctx.extra.socket.close(WS_TOO_MANY_SOCKETS, `At most ${MAX_SOCKETS_PER_TENANT} connections per tenant`);
            return false;
          }
          ctx.extra.socket.once("close", () => quotas.close(ctx));
        }
        if (principal.kind !== "anonymous") {
          credentials.watch(ctx.extra.socket, ctx.connectionParams?.authorization);
          return true;
        }
        // Closed here, not by returning false: that would close with 4403 "Forbidden", which reads like a scope problem.
        ctx.extra.socket.close(WS_UNAUTHORIZED, "Unauthorized");
        return false;
      },
      async onSubscribe(ctx, _id, payload) {
        const overQuota = quotas.refusal(ctx);
        if (overQuota !== null) return [toGraphQLError(overQuota)];
        if (Buffer.byteLength(payload.query, "utf8") > MAX_DOCUMENT_BYTES) {
          return [requestError(new GraphQLError(`GraphQL documents are limited to ${MAX_DOCUMENT_BYTES / 1024} KB`))];
        }
        let document: DocumentNode;
        try {
          document = parse(payload.query);
        } catch (error: unknown) {
          if (error instanceof GraphQLError) return [requestError(error)];
          throw error;
        }
        const invalid = validate(opts.schema, document, rules);
        if (invalid.length > 0) return invalid.map(requestError);
        const operation = getOperationAST(document, payload.operationName ?? undefined);
        const refusal =
          (operation == null ? null : costRefusal(opts.schema, document, operation, payload.variables ?? undefined)) ?? textRefusal(document, payload.variables);
        if (refusal !== null) return [toGraphQLError(refusal)];
        const requestId = `ws-${randomUUID()}`;
        const contextValue = await opts.contextFor(ctx.connectionParams?.authorization, { requestId, log: opts.log.child({ requestId }) });
        if (contextValue.principal.kind === "anonymous" && usesIntrospection(document)) {
          return [toGraphQLError(new UnauthenticatedError())];
        }
        try {
          // A socket is no way around the tenant's API rate: each operation it starts is a call.
          await opts.admit(contextValue.principal, 1);
        } catch (error: unknown) {
          if (error instanceof GraphQLError) return [error];
          throw error;
        }
        return {
          schema: opts.schema,
          document,
          operationName: payload.operationName ?? null,
          variableValues: payload.variables ?? null,
          contextValue,
        };
      },
      // Each operation runs within its tenant's share of the gateway, as over HTTP; a subscription's
      // share covers its subscribe resolver (the initial check of what it follows), not its events.
      execute: (args) => withinShare(args, execute),
      // Its events are resolved a few at a time per tenant and gateway (event-executions.ts).
      subscribe: (args) => withinShare(args, (a) => subscribeWithin(executions, tenantOf(a), a)),
      onError(_ctx, _id, _payload, errors) {
        return format(errors, undefined);
      },
      onNext(ctx, _id, _payload, args, result) {
        // A closed socket's message is not sent (graphql-ws sends only on an open socket).
        if (outputLimit.check(ctx.extra.socket, () => [...quotas.peers(ctx)].map((peer) => (peer as typeof ctx).extra.socket))) return undefined;
        const message = result.errors?.length ? { ...result, errors: format(result.errors, args.contextValue) } : { ...result };
        // Nothing of this result may outlive its message: a subscription lives on between events, and 30
        // workflowUpdated subscriptions over 4 MiB of payloads each kept their last event (~110-124 MB): in
        // their context's loaders (the rows read) and in graphql-ws's loop, which holds `result` until the next event.
        if (isGatewayContext(args.contextValue)) args.contextValue.loaders.clearAll();
        (result as { data?: unknown }).data = undefined;
        return message;
      },
    },
    wsServer,
  );

  return {
    async dispose() {
      credentials.stop();
      await cleanup.dispose();
      await new Promise<void>((resolve) => wsServer.close(() => resolve()));
    },
  };
}
