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
import { hasPermission, type Permission } from "./scopes.js";

export function requireOperator(principal: Principal): void {
  if (principal.kind === "anonymous") throw new UnauthenticatedError();
  if (principal.kind !== "operator") throw new ForbiddenError("This operation needs the platform admin token");
}

export function requireTenant(principal: Principal, permission: Permission): TenantPrincipal {
  if (principal.kind === "anonymous") throw new UnauthenticatedError();
  if (principal.kind === "operator") throw new ForbiddenError("The admin token cannot act for a tenant; use an API key");
  if (!hasPermission(principal.scopes, permission)) {
    throw new ForbiddenError(`This API key's scopes do not allow this operation`, { requiredPermission: permission });
  }
  return principal;
}
