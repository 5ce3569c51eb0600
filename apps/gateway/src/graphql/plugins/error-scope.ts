/**
 * Tags each error a request meets with the request's id, logger and calling
 * tenant before Apollo formats it: formatError sees the error alone, and a
 * masked error must carry the requestId the client can quote, logged under the
 * same id with the tenant it happened to.
 */
import type { ApolloServerPlugin, GraphQLRequestListener } from "@apollo/server";
import { tagErrorScope } from "../../observability/request-scope.js";
import type { GatewayContext } from "../context.js";

export function errorScope(): ApolloServerPlugin<GatewayContext> {
  // One listener for every request: it keeps no state of its own.
  const listener: GraphQLRequestListener<GatewayContext> = {
    async didEncounterErrors({ contextValue, errors }) {
      const { requestId, log, principal } = contextValue;
      const scope = { requestId, log, tenantId: principal.kind === "tenant" ? principal.tenantId : undefined };
      for (const error of errors) tagErrorScope(error, scope);
    },
  };
  return {
    async requestDidStart() {
      return listener;
    },
  };
}
