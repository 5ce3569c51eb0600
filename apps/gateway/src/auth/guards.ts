/**
 * Authorization checks, called first thing by every resolver.
 *
 * Documented choice: the admin token presented on a tenant operation gets
 * FORBIDDEN (it is a valid credential, just not a tenant's), and a tenant key
 * on an operator operation gets FORBIDDEN too. Only a missing or invalid
 * credential gets UNAUTHENTICATED.
 */
import { ForbiddenError, UnauthenticatedError } from "@tasklane/core";
import type { Principal, TenantPrincipal } from "./principal.js";
import { hasPermission, scopesGranting, type ApiKeyScope, type Permission } from "./scopes.js";

export function requireOperator(principal: Principal): void {
  if (principal.kind === "anonymous") throw new UnauthenticatedError();
  if (principal.kind !== "operator") throw new ForbiddenError("This operation needs the platform admin token");
}

export function requireTenant(principal: Principal, permission: Permission): TenantPrincipal {
  if (principal.kind === "anonymous") throw new UnauthenticatedError();
  if (principal.kind === "operator") throw new ForbiddenError("The admin token cannot act for a tenant; use an API key");
  if (!hasPermission(principal.scopes, permission)) {
    const allowedScopes = scopesGranting(permission);
    throw new ForbiddenError(`This operation needs an API key with scope ${either(allowedScopes)}; this key has ${principal.scopes.length > 0 ? principal.scopes.join(", ") : "none"}`, {
      requiredPermission: permission,
      allowedScopes,
    });
  }
  return principal;
}

/** "full", "full or worker", "full, submit or worker". */
function either(scopes: readonly ApiKeyScope[]): string {
  return scopes.length <= 1 ? scopes.join("") : `${scopes.slice(0, -1).join(", ")} or ${scopes.at(-1)}`;
}
