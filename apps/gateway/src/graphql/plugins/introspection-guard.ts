/**
 * Contract: introspection is allowed with a valid credential unless disabled
 * by configuration (INTROSPECTION=0 is enforced by Apollo's own rule). An
 * anonymous caller asking for __schema/__type gets UNAUTHENTICATED; plain
 * __typename stays free, clients add it everywhere.
 */
import type { ApolloServerPlugin } from "@apollo/server";
import { UnauthenticatedError } from "@tasklane/core";
import { BREAK, Kind, visit, type DocumentNode } from "graphql";
import type { GatewayContext } from "../context.js";
import { toGraphQLError } from "../errors.js";

export function usesIntrospection(document: DocumentNode): boolean {
  let found = false;
  visit(document, {
    [Kind.FIELD](node) {
      if (node.name.value === "__schema" || node.name.value === "__type") {
        found = true;
        return BREAK;
      }
      return undefined;
    },
  });
  return found;
}

export function introspectionGuard(): ApolloServerPlugin<GatewayContext> {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ document, contextValue }) {
          if (contextValue.principal.kind === "anonymous" && usesIntrospection(document)) {
            throw toGraphQLError(new UnauthenticatedError());
          }
        },
      };
    },
  };
}
