/**
 * tasklane_api_requests_total{operation,code}: one increment per root field,
 * labelled with the schema's field name (bounded, unlike client-chosen
 * operation names) and OK or the code of the error on that field. Requests
 * that never reached execution count once as operation="none".
 */
import type { ApolloServerPlugin } from "@apollo/server";
import { Kind, type GraphQLFormattedError, type OperationDefinitionNode } from "graphql";
import type { GatewayMetrics } from "../../observability/metrics.js";
import type { GatewayContext } from "../context.js";

function rootFields(operation: OperationDefinitionNode): Array<{ name: string; key: string }> {
  const out: Array<{ name: string; key: string }> = [];
  for (const sel of operation.selectionSet.selections) {
    if (sel.kind === Kind.FIELD) out.push({ name: sel.name.value, key: sel.alias?.value ?? sel.name.value });
  }
  return out;
}

function codeOf(error: GraphQLFormattedError | undefined): string {
  const code = error?.extensions?.code;
  return typeof code === "string" ? code : "OK";
}

export function requestMetrics(metrics: GatewayMetrics): ApolloServerPlugin<GatewayContext> {
  return {
    async requestDidStart() {
      return {
        async willSendResponse({ operation, response }) {
          if (response.body.kind !== "single") return;
          const errors = response.body.singleResult.errors ?? [];
          const fields = operation ? rootFields(operation) : [];
          if (fields.length === 0) {
            metrics.apiRequests.inc({ operation: "none", code: errors.length > 0 ? codeOf(errors[0]) : "OK" });
            return;
          }
          const requestLevel = errors.find((e) => e.path === undefined);
          for (const field of fields) {
            const error = requestLevel ?? errors.find((e) => e.path?.[0] === field.key);
            metrics.apiRequests.inc({ operation: field.name, code: codeOf(error) });
          }
        },
      };
    },
  };
}
