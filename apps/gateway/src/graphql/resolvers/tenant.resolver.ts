/** Operator calls (createTenant, updateTenant) and the caller's own tenant. */
import { createTenantInputSchema, parseArg, parseInput, tenantLimitsInputSchema } from "@tasklane/core";
import { Arg, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root } from "type-graphql";
import { requireOperator, requireTenant } from "../../auth/guards.js";
import { Permission } from "../../auth/scopes.js";
import type { GatewayContext } from "../context.js";
import { idArgSchema } from "../input-schemas.js";
import { toTenant } from "../mappers.js";
import { CreateTenantInput, Tenant, TenantLimitsInput, TenantUsage, TenantWithKey } from "../types/tenant.js";

@Resolver(() => Tenant)
export class TenantResolver {
  @Query(() => Tenant, { description: "the caller's own tenant" })
  async tenant(@Ctx() ctx: GatewayContext): Promise<Tenant> {
    const caller = requireTenant(ctx.principal, Permission.READ);
    return toTenant(await ctx.services.tenants.get(caller.tenantId));
  }

  /** Authorised by whoever returned the parent Tenant (its own key, or the operator). */
  @FieldResolver(() => TenantUsage)
  usage(@Root() tenant: Tenant, @Ctx() ctx: GatewayContext): Promise<TenantUsage> {
    return ctx.services.tenants.usage(tenant.id);
  }

  @Mutation(() => TenantWithKey, { description: "operator (admin token)" })
  async createTenant(@Arg("input", () => CreateTenantInput) input: CreateTenantInput, @Ctx() ctx: GatewayContext): Promise<TenantWithKey> {
    requireOperator(ctx.principal);
    const parsed = parseInput(createTenantInputSchema, input);
    const created = await ctx.services.tenants.create(parsed);
    ctx.log.info({ tenantId: created.tenant.id }, "tenant created");
    return { tenant: toTenant(created.tenant), apiKey: created.apiKey, signingSecret: created.signingSecret };
  }

  @Mutation(() => Tenant, { description: "operator (admin token); null limits are left as they are" })
  async updateTenant(
    @Arg("id", () => ID) id: string,
    @Arg("limits", () => TenantLimitsInput) limits: TenantLimitsInput,
    @Ctx() ctx: GatewayContext,
  ): Promise<Tenant> {
    requireOperator(ctx.principal);
    const tenantId = parseArg(idArgSchema, "id", id);
    const parsed = parseInput(tenantLimitsInputSchema, limits);
    return toTenant(await ctx.services.tenants.updateLimits(tenantId, parsed));
  }

  @Mutation(() => String, { description: "new tenant signing secret, shown once; the old one stays valid for 24 h" })
  rotateSigningSecret(@Ctx() ctx: GatewayContext): Promise<string> {
    const caller = requireTenant(ctx.principal, Permission.MANAGE);
    return ctx.services.tenants.rotateSigningSecret(caller.tenantId);
  }
}
