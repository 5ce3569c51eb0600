/**
 * Authorization header → Principal. Every way a credential can be wrong ends
 * as ANONYMOUS, so the caller sees the same UNAUTHENTICATED error for all of them.
 */
import type { ApiKeyAuthenticator } from "./api-key-authenticator.js";
import type { OperatorToken } from "./operator-token.js";
import { ANONYMOUS, OPERATOR, type Principal } from "./principal.js";

const BEARER = /^Bearer[ \t]+(\S{1,512})[ \t]*$/i;

export interface Authenticator {
  principalFor(authorization: unknown): Promise<Principal>;
}

export function createAuthenticator(operator: OperatorToken, apiKeys: ApiKeyAuthenticator): Authenticator {
  return {
    async principalFor(authorization) {
      if (typeof authorization !== "string") return ANONYMOUS;
      const token = BEARER.exec(authorization)?.[1];
      if (token === undefined) return ANONYMOUS;
      // Tenant keys first: nearly every call carries one, and the operator check hashes the
      // token (a SHA-256 per call, ~2.5% of a small call's gateway CPU) to compare in constant time.
      const tenant = await apiKeys.authenticate(token);
      if (tenant !== null) return tenant;
      return operator.matches(token) ? OPERATOR : ANONYMOUS;
    },
  };
}
