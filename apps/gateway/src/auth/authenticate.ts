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
      if (operator.matches(token)) return OPERATOR;
      return (await apiKeys.authenticate(token)) ?? ANONYMOUS;
    },
  };
}
