/**
 * Operations whose issue has not landed yet. They exist in the schema with
 * their contract shape, check the caller like the real ones will, then refuse
 * with a typed error rather than pretending to work.
 */
import { BadUserInputError } from "@tasklane/core";
import { requireTenant } from "../../auth/guards.js";
import type { Permission } from "../../auth/scopes.js";
import type { GatewayContext } from "../context.js";

export function notAvailableYet(ctx: GatewayContext, operation: string, permission: Permission): never {
  requireTenant(ctx.principal, permission);
  throw new BadUserInputError(`${operation} is not available yet`);
}
