/** Refuses, before execution, strings the database cannot store (validation/text-values.ts). */
import type { ApolloServerPlugin } from "@apollo/server";
import type { GatewayContext } from "../context.js";
import { toGraphQLError } from "../errors.js";
import { textRefusal } from "../validation/text-values.js";

export function textGuard(): ApolloServerPlugin<GatewayContext> {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ document, request }) {
          const refusal = textRefusal(document, request.variables);
          if (refusal !== null) throw toGraphQLError(refusal);
        },
      };
    },
  };
}
