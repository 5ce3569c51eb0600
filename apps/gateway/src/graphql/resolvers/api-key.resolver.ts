/** A tenant's API keys. */
import { parseArg, parseInput } from "@tasklane/core";
import { Arg, Ctx, ID, Mutation, Query, Resolver } from "type-graphql";
import { requireTenant } from "../../auth/guards.js";
import { Permission } from "../../auth/scopes.js";
import type { GatewayContext } from "../context.js";
import { createApiKeyArgsSchema, idArgSchema } from "../input-schemas.js";
import { toApiKey } from "../mappers.js";
import { ApiKey, ApiKeyWithSecret } from "../types/api-key.js";

@Resolver(() => ApiKey)
export class ApiKeyResolver {
  @Query(() => [ApiKey])
  async apiKeys(@Ctx() ctx: GatewayContext): Promise<ApiKey[]> {
    const caller = requireTenant(ctx.principal, Permission.READ);
    return (await ctx.services.apiKeys.list(caller.tenantId)).map(toApiKey);
  }

  @Mutation(() => ApiKeyWithSecret, {
    description:
      'scopes: full, submit, worker, read (default ["full"]); at most 100 live keys per tenant (a revoked one frees its slot; console session keys are not counted): one more is QUOTA_EXCEEDED',
  })
  async createApiKey(
    @Arg("name", () => String) name: string,
    @Arg("scopes", () => [String], { nullable: true }) scopes: string[] | null | undefined,
    @Ctx() ctx: GatewayContext,
  ): Promise<ApiKeyWithSecret> {
    const caller = requireTenant(ctx.principal, Permission.MANAGE);
    const args = parseInput(createApiKeyArgsSchema, { name, scopes });
    const { row, secret } = await ctx.services.apiKeys.create(caller.tenantId, args.name, args.scopes);
    ctx.log.info({ tenantId: caller.tenantId, apiKeyId: row.id, scopes: args.scopes }, "api key created");
    return { apiKey: toApiKey(row), secret };
  }

  @Mutation(() => ApiKey)
  async revokeApiKey(@Arg("id", () => ID) id: string, @Ctx() ctx: GatewayContext): Promise<ApiKey> {
    const caller = requireTenant(ctx.principal, Permission.MANAGE);
    const row = await ctx.services.apiKeys.revoke(caller.tenantId, parseArg(idArgSchema, "id", id));
    ctx.log.info({ tenantId: caller.tenantId, apiKeyId: row.id }, "api key revoked");
    return toApiKey(row);
  }
}
