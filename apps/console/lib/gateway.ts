/**
 * The console's only way to tenant data: GraphQL over HTTP to the gateway,
 * from this server, with the signed-in user's session key. The browser never
 * sees the key; it talks to the console's own pages, actions and routes.
 */
import "server-only";
import { config } from "./config";
import { failureFrom, unavailable, type ApiResult } from "./graphql-error";
import { requireSession, signInRedirect } from "./session";

interface GraphQLBody<T> {
  data?: T | null;
  errors?: { message?: unknown; extensions?: { code?: unknown; fieldErrors?: unknown } }[];
}

/** One POST to the gateway. `apiKey: null` calls anonymously (sign-in). Never throws for API errors. */
export async function postGraphQL<T>(query: string, variables: Record<string, unknown> | undefined, apiKey: string | null): Promise<ApiResult<T>> {
  let response: Response;
  try {
    response = await fetch(config.apiUrl, {
      method: "POST",
      headers: { "content-type": "application/json", ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) },
      body: JSON.stringify({ query, variables }),
      cache: "no-store",
      signal: AbortSignal.timeout(config.apiTimeoutMs),
    });
  } catch (error: unknown) {
    return { ok: false, error: unavailable(error instanceof Error ? error.message : String(error)) };
  }
  let body: GraphQLBody<T>;
  try {
    body = (await response.json()) as GraphQLBody<T>;
  } catch {
    return { ok: false, error: unavailable(`HTTP ${response.status} without a GraphQL body`) };
  }
  if (body.errors?.length) return { ok: false, error: failureFrom(body.errors[0]) };
  if (body.data == null) return { ok: false, error: unavailable(`HTTP ${response.status} without data`) };
  return { ok: true, data: body.data };
}

/**
 * A query or mutation as the signed-in user. No session, or a key the API no
 * longer accepts (expired, revoked): back to the sign-in page.
 */
export async function gql<T>(query: string, variables?: Record<string, unknown>): Promise<ApiResult<T>> {
  const session = await requireSession();
  const result = await postGraphQL<T>(query, variables, session.apiKey);
  if (!result.ok && result.error.code === "UNAUTHENTICATED") await signInRedirect("expired");
  return result;
}
