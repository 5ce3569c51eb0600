/**
 * tasklane_api_requests_total{operation,code}: one increment per root field,
 * labelled with the schema's field name (bounded, unlike client-chosen
 * operation names) and OK or the code of the error on that field. Requests
 * that never reached execution count once as operation="none": those Apollo
 * could not parse or validate, and those refused while their context was
 * created (RATE_LIMITED, OVERLOADED while Postgres is down), before any field
 * is known. The document is not parsed to
 * name them: refusals shed load, and parsing would spend CPU on exactly the
 * requests being turned away.
 */
import type { ApolloServerPlugin } from "@apollo/server";
import { ErrorCode, isUserError } from "@tasklane/core";
import { GraphQLError, Kind, type GraphQLFormattedError, type OperationDefinitionNode } from "graphql";
import { isStoreUnavailable } from "../store-unavailable.js";
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

/** The code a context failure is answered with (formatError's mapping: a UserError's code, OVERLOADED for a lost store, else internal). */
function refusalCode(error: unknown): string {
  for (let e: unknown = error, depth = 0; e !== undefined && depth < 5; depth++) {
    if (isUserError(e)) return e.code;
    e = e instanceof GraphQLError ? e.originalError : undefined;
  }
  return isStoreUnavailable(error) ? ErrorCode.OVERLOADED : ErrorCode.INTERNAL_SERVER_ERROR;
}

export function requestMetrics(metrics: GatewayMetrics): ApolloServerPlugin<GatewayContext> {
  return {
    // Apollo calls no request hook for these: the context is built before requestDidStart.
    async contextCreationDidFail({ error }) {
      metrics.apiRequests.inc({ operation: "none", code: refusalCode(error) });
    },
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
