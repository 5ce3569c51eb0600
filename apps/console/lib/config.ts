/**
 * The console's server-side settings, read once. All optional:
 * - TASKLANE_API_URL [http://127.0.0.1:$PORT/graphql, PORT defaulting to 4000]:
 *   the gateway's GraphQL endpoint, called only from this server (never the
 *   browser). scripts/start.mjs fills in the default from PORT before Next
 *   starts, since Next then sets PORT to the console's own port.
 * - NEXTAUTH_SECRET / NEXTAUTH_URL: filled in by scripts/start.mjs when unset.
 */
import "server-only";

function apiUrl(): string {
  return process.env.TASKLANE_API_URL || "http://127.0.0.1:4000/graphql";
}

export const config = {
  apiUrl: apiUrl(),
  /** graphql-ws lives on the same path as HTTP GraphQL. */
  get wsUrl(): string {
    return this.apiUrl.replace(/^http/, "ws");
  },
  /** How long one API call may take before the page shows an error state. */
  apiTimeoutMs: 15_000,
} as const;

export function authSecret(): string {
  const secret = process.env.NEXTAUTH_SECRET;
  if (!secret) throw new Error("NEXTAUTH_SECRET is not set (scripts/start.mjs sets one when starting the console)");
  return secret;
}
