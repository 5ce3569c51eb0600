/**
 * Refuses, before execution, an operation whose static cost is over budget or
 * that asks for a page above MAX_PAGE_SIZE (validation/query-cost.ts), or
 * that selects tasks' payloads and results too often (validation/body-selections.ts),
 * with BAD_USER_INPUT. Runs after variables are known, so `first: $n` counts as n.
 */
import type { ApolloServerPlugin } from "@apollo/server";
import { BadUserInputError, MAX_PAGE_SIZE } from "@tasklane/core";
import type { DocumentNode, GraphQLSchema, OperationDefinitionNode } from "graphql";
import type { GatewayContext } from "../context.js";
import { toGraphQLError } from "../errors.js";
import { MAX_BODY_SELECTIONS, bodySelections } from "../validation/body-selections.js";
import { MAX_QUERY_COST, operationCost } from "../validation/query-cost.js";

/** The refusal for an operation that may not run, or null when it may. */
export function costRefusal(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  variables: Readonly<Record<string, unknown>> | undefined,
): BadUserInputError | null {
  const { cost, oversizedPage } = operationCost(schema, document, operation, variables);
  if (oversizedPage !== null) {
    const message = `first must be at most ${MAX_PAGE_SIZE}`;
    return new BadUserInputError(`${oversizedPage.field}: ${message} (got ${oversizedPage.first})`, [{ path: `${oversizedPage.field}.first`, message }]);
  }
  if (cost > MAX_QUERY_COST) {
    return new BadUserInputError(`Query cost ${cost} exceeds the budget of ${MAX_QUERY_COST}; ask for smaller pages or fewer fields`);
  }
  const bodies = bodySelections(schema, document, operation);
  if (bodies.repeated !== null) {
    return new BadUserInputError(`Task.${bodies.repeated} is selected under more than one name in one selection set; select it once`);
  }
  if (bodies.count > MAX_BODY_SELECTIONS) {
    return new BadUserInputError(
      `The operation selects a task's payload or result ${bodies.count} times; the limit is ${MAX_BODY_SELECTIONS}: read the other tasks in further requests, or through a page (tasks)`,
    );
  }
  return null;
}

export function queryCostGuard(): ApolloServerPlugin<GatewayContext> {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ schema, document, operation, request }) {
          if (operation === undefined) return;
          const refusal = costRefusal(schema, document, operation, request.variables);
          if (refusal !== null) throw toGraphQLError(refusal);
        },
      };
    },
  };
}
