/**
 * Tags each error a request meets with the request's id and logger before
 * Apollo formats it: formatError sees the error alone, and a masked error must
 * carry the requestId the client can quote, logged under the same id.
 */
import type { ApolloServerPlugin, GraphQLRequestListener } from "@apollo/server";
import { tagErrorScope } from "../../observability/request-scope.js";
import type { GatewayContext } from "../context.js";

export function errorScope(): ApolloServerPlugin<GatewayContext> {
  // One listener for every request: it keeps no state of its own.
  const listener: GraphQLRequestListener<GatewayContext> = {
    async didEncounterErrors({ contextValue, errors }) {
      for (const error of errors) tagErrorScope(error, contextValue);
    },
  };
  return {
    async requestDidStart() {
      return listener;
    },
  };
}
