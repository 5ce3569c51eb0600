/**
 * GraphQL answers errors in a 200 body, but throttling must be visible to
 * proxies and clients: RATE_LIMITED → 429, OVERLOADED → 503, each with a
 * Retry-After header taken from extensions.retryAfterSeconds.
 */
import type { ApolloServerPlugin } from "@apollo/server";
import { ErrorCode, httpStatusForCode } from "@tasklane/core";
import type { GraphQLFormattedError } from "graphql";
import type { GatewayContext } from "../context.js";

const THROTTLE_CODES: ReadonlySet<unknown> = new Set([ErrorCode.RATE_LIMITED, ErrorCode.OVERLOADED]);

function throttleError(errors: readonly GraphQLFormattedError[] | undefined): GraphQLFormattedError | undefined {
  return errors?.find((e) => THROTTLE_CODES.has(e.extensions?.code));
}

export function throttleHttpStatus(): ApolloServerPlugin<GatewayContext> {
  return {
    async requestDidStart() {
      return {
        async willSendResponse({ response }) {
          if (response.body.kind !== "single") return;
          const error = throttleError(response.body.singleResult.errors);
          if (error === undefined) return;
          const code = error.extensions?.code === ErrorCode.OVERLOADED ? ErrorCode.OVERLOADED : ErrorCode.RATE_LIMITED;
          response.http.status = httpStatusForCode(code);
          const seconds = error.extensions?.retryAfterSeconds;
          if (typeof seconds === "number" && Number.isFinite(seconds)) {
            response.http.headers.set("retry-after", String(Math.max(1, Math.ceil(seconds))));
          }
        },
      };
    },
  };
}
