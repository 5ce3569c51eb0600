/**
 * Tags each error a request meets with the request's id and logger before
 * Apollo formats it: formatError sees the error alone, and a masked error must
 * carry the requestId the client can quote, logged under the same id.
 */
import type { ApolloServerPlugin } from "@apollo/server";
import { tagErrorScope } from "../../observability/request-scope.js";
import type { GatewayContext } from "../context.js";

export function errorScope(): ApolloServerPlugin<GatewayContext> {
  const listener = {
    async didEncounterErrors({ contextValue, errors }: { contextValue: GatewayContext; errors: readonly unknown[] }) {
      for (const error of errors) tagErrorScope(error, contextValue);
    },
  };
  return {
    async requestDidStart() {
      return listener;
    },
  };
}
