/** Who is calling. Resolved once per request from the Authorization header. */
import type { ApiKeyScope } from "./scopes.js";

export type Principal =
  /** No credential, or one that did not check out: the two look identical to the caller. */
  | { readonly kind: "anonymous" }
  /** The platform admin token: createTenant / updateTenant only. */
  | { readonly kind: "operator" }
  | TenantPrincipal;

export interface TenantPrincipal {
  readonly kind: "tenant";
  readonly tenantId: string;
  readonly apiKeyId: string;
  readonly scopes: readonly ApiKeyScope[];
}

export const ANONYMOUS: Principal = Object.freeze({ kind: "anonymous" });
export const OPERATOR: Principal = Object.freeze({ kind: "operator" });
