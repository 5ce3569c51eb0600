/**
 * Webhook endpoints and their delivery log. Storage is behind
 * services/webhook-service.ts; this file validates, authorises and maps.
 */
import { MAX_WEBHOOKS_PER_TENANT, createWebhookInputSchema, parseArg, parseInput, updateWebhookInputSchema, webhookDeliveriesFirstSchema } from "@tasklane/core";
import { Arg, Ctx, ID, Int, Mutation, Query, Resolver } from "type-graphql";
import { requireTenant } from "../../auth/guards.js";
import { Permission } from "../../auth/scopes.js";
import type { GatewayContext } from "../context.js";
import { idArgSchema } from "../input-schemas.js";
import { toWebhook, toWebhookDelivery } from "../mappers.js";
import { CreateWebhookInput, UpdateWebhookInput, Webhook, WebhookDelivery, WebhookWithSecret } from "../types/webhook.js";

@Resolver(() => Webhook)
export class WebhookResolver {
  @Query(() => [Webhook], { description: "the caller's live endpoints, oldest first; disabled ones say why" })
  async webhooks(@Ctx() ctx: GatewayContext): Promise<Webhook[]> {
    const caller = requireTenant(ctx.principal, Permission.READ);
    return (await ctx.services.webhooks.list(caller.tenantId)).map(toWebhook);
  }

  @Query(() => [WebhookDelivery], { description: "newest first; webhookId omitted: every delivery, callbacks included" })
  async webhookDeliveries(
    @Arg("webhookId", () => ID, { nullable: true }) webhookId: string | null | undefined,
    @Arg("first", () => Int, { nullable: true }) first: number | null | undefined,
    @Ctx() ctx: GatewayContext,
  ): Promise<WebhookDelivery[]> {
    const caller = requireTenant(ctx.principal, Permission.READ);
    const id = webhookId == null ? null : parseArg(idArgSchema, "webhookId", webhookId);
    const rows = await ctx.services.webhooks.deliveries(caller.tenantId, id, parseArg(webhookDeliveriesFirstSchema, "first", first));
    return rows.map(toWebhookDelivery);
  }

  @Mutation(() => WebhookWithSecret, { description: `the secret is shown once; at most ${MAX_WEBHOOKS_PER_TENANT} live endpoints per tenant (a deleted one frees its slot): one more is QUOTA_EXCEEDED` })
  async createWebhook(@Arg("input", () => CreateWebhookInput) input: CreateWebhookInput, @Ctx() ctx: GatewayContext): Promise<WebhookWithSecret> {
    const caller = requireTenant(ctx.principal, Permission.MANAGE);
    const { row, secret } = await ctx.services.webhooks.create(caller.tenantId, parseInput(createWebhookInputSchema, input));
    ctx.log.info({ tenantId: caller.tenantId, webhookId: row.id, events: row.events }, "webhook created");
    return { webhook: toWebhook(row), secret };
  }

  @Mutation(() => Webhook, { description: "changes what the input gives; enabled: true re-enables an endpoint the notifier disabled (410 Gone, too many failures) with the same secret" })
  async updateWebhook(
    @Arg("id", () => ID) id: string,
    @Arg("input", () => UpdateWebhookInput) input: UpdateWebhookInput,
    @Ctx() ctx: GatewayContext,
  ): Promise<Webhook> {
    const caller = requireTenant(ctx.principal, Permission.MANAGE);
    const row = await ctx.services.webhooks.update(caller.tenantId, parseArg(idArgSchema, "id", id), parseInput(updateWebhookInputSchema, input));
    ctx.log.info({ tenantId: caller.tenantId, webhookId: row.id, enabled: row.enabled, changed: Object.keys(input).filter((k) => input[k as keyof UpdateWebhookInput] != null) }, "webhook updated");
    return toWebhook(row);
  }

  @Mutation(() => Boolean, { description: "stops deliveries at once, including retries already queued" })
  async deleteWebhook(@Arg("id", () => ID) id: string, @Ctx() ctx: GatewayContext): Promise<boolean> {
    const caller = requireTenant(ctx.principal, Permission.MANAGE);
    const deleted = await ctx.services.webhooks.delete(caller.tenantId, parseArg(idArgSchema, "id", id));
    ctx.log.info({ tenantId: caller.tenantId, webhookId: id }, "webhook deleted");
    return deleted;
  }
}
