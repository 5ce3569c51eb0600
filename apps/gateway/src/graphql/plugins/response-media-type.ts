/**
 * The media type of each single result, chosen once per distinct Accept
 * header. Apollo runs Negotiator over the header on every request that has
 * one, ~7% of a small call's gateway CPU (`{ __typename }`, gateway-per-call
 * --profile), for a header every SDK client sends alike. Set on the response
 * before Apollo looks, the type is left as it is; Apollo's own choice when
 * there is no header is already cheap, and a header that accepts none of the
 * types still reaches Apollo's 406.
 */
import type { ApolloServerPlugin } from "@apollo/server";
import Negotiator from "negotiator";
import type { GatewayContext } from "../context.js";

/** What Apollo offers a single result, in its order (chooseContentTypeForSingleResultResponse, @apollo/server 5). */
export const SINGLE_RESULT_MEDIA_TYPES = [
  "application/json; charset=utf-8",
  "application/graphql-response+json; charset=utf-8",
  "application/json; callbackSpec=1.0; charset=utf-8",
];

/** Distinct headers kept; past this a header is negotiated afresh (clients send a handful). */
const MAX_KEPT = 64;

export function responseMediaType(): ApolloServerPlugin<GatewayContext> {
  const kept = new Map<string, string | null>();
  const choose = (accept: string): string | null => {
    const known = kept.get(accept);
    if (known !== undefined) return known;
    const chosen = new Negotiator({ headers: { accept } }).mediaType(SINGLE_RESULT_MEDIA_TYPES) ?? null;
    if (kept.size < MAX_KEPT) kept.set(accept, chosen);
    return chosen;
  };
  return {
    async requestDidStart({ request, response }) {
      const accept = request.http?.headers.get("accept");
      if (!accept) return;
      const type = choose(accept);
      if (type !== null) response.http.headers.set("content-type", type);
    },
  };
}
