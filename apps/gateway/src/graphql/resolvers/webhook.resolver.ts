/**
 * Webhook endpoints and their delivery log. Storage is behind
 * services/webhook-service.ts; this file validates, authorises and maps.
 */
import { MAX_REDELIVERIES_PER_CALL } from "@tasklane/db";
import { MAX_WEBHOOKS_PER_TENANT, createWebhookInputSchema, parseArg, parseInput, updateWebhookInputSchema, webhookDeliveriesFirstSchema } from "@tasklane/core";
import { Arg, Ctx, ID, Int, Mutation, Query, Resolver } from "type-graphql";
import { requireTenant } from "../../auth/guards.js";
import { Permission } from "../../auth/scopes.js";
import type { GatewayContext } from "../context.js";
import { idArgSchema } from "../input-schemas.js";
import { toWebhook, toWebhookDelivery } from "../mappers.js";
import { DateTimeScalar } from "../types/scalars.js";
import { CreateWebhookInput, UpdateWebhookInput, Webhook, WebhookDelivery, WebhookDeliveryStatus, WebhookWithSecret } from "../types/webhook.js";

@Resolver(() => Webhook)
export class WebhookResolver {
  @Query(() => [Webhook], { description: "the caller's live endpoints, oldest first; disabled ones say why" })
  async webhooks(@Ctx() ctx: GatewayContext): Promise<Webhook[]> {
    const caller = requireTenant(ctx.principal, Permission.READ);
    return (await ctx.services.webhooks.list(caller.tenantId)).map(toWebhook);
  }

  @Query(() => [WebhookDelivery], {
    description:
      "newest first (createdAt, then id); webhookId omitted: every delivery, callbacks included. Page on with before: the last id of the previous page (an unknown id is NOT_FOUND); status keeps only those",
  })
  async webhookDeliveries(
    @Arg("webhookId", () => ID, { nullable: true }) webhookId: string | null | undefined,
    @Arg("first", () => Int, { nullable: true }) first: number | null | undefined,
    @Arg("status", () => WebhookDeliveryStatus, { nullable: true, description: "only deliveries with this status" }) status: WebhookDeliveryStatus | null | undefined,
    @Arg("before", () => ID, { nullable: true, description: "a delivery id: only deliveries after it in this order (older), so pages walk every delivery once" })
    before: string | null | undefined,
    @Ctx() ctx: GatewayContext,
  ): Promise<WebhookDelivery[]> {
    const caller = requireTenant(ctx.principal, Permission.READ);
    const id = webhookId == null ? null : parseArg(idArgSchema, "webhookId", webhookId);
    const rows = await ctx.services.webhooks.deliveries(caller.tenantId, id, parseArg(webhookDeliveriesFirstSchema, "first", first), {
      status: status ?? null,
      before: before == null ? null : parseArg(idArgSchema, "before", before),
    });
    return rows.map(toWebhookDelivery);
  }

  @Mutation(() => WebhookDelivery, {
    description:
      "sends a finished delivery (FAILED, or DELIVERED to send it again) anew: PENDING, due now, a fresh round of retries, the same body and webhook-id header (receivers deduplicate on it); attempts so far stay counted. PENDING: CONFLICT. Its webhook deleted: CONFLICT; disabled: CONFLICT, enable it first (updateWebhook). A callback whose URL is no longer allowed: CONFLICT",
  })
  async redeliverWebhookDelivery(@Arg("id", () => ID) id: string, @Ctx() ctx: GatewayContext): Promise<WebhookDelivery> {
    const caller = requireTenant(ctx.principal, Permission.MANAGE);
    const row = await ctx.services.webhooks.redeliver(caller.tenantId, parseArg(idArgSchema, "id", id));
    ctx.log.info({ tenantId: caller.tenantId, deliveryId: row.id, webhookId: row.webhookId }, "webhook delivery redelivered");
    return toWebhookDelivery(row);
  }

  @Mutation(() => Int, {
    description: `recovers after an outage: the webhook's FAILED deliveries created at or after since go back to PENDING (as redeliverWebhookDelivery), oldest first; returns how many. At most ${MAX_REDELIVERIES_PER_CALL.toLocaleString("en-US")} per call: when it answers that, call again (those it put back are PENDING now, so the same since takes the next ones). Its webhook deleted or disabled: CONFLICT`,
  })
  async redeliverWebhookDeliveries(
    @Arg("webhookId", () => ID) webhookId: string,
    @Arg("since", () => DateTimeScalar) since: Date,
    @Ctx() ctx: GatewayContext,
  ): Promise<number> {
    const caller = requireTenant(ctx.principal, Permission.MANAGE);
    const id = parseArg(idArgSchema, "webhookId", webhookId);
    const count = await ctx.services.webhooks.redeliverSince(caller.tenantId, id, since);
    ctx.log.info({ tenantId: caller.tenantId, webhookId: id, since, count }, "webhook deliveries redelivered");
    return count;
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

  @Mutation(() => WebhookWithSecret, {
    description:
      "a new signing secret for the endpoint, shown once; the one it replaces also signs deliveries for 24 h (a second v1 signature in webhook-signature), so receivers verify with either while they switch. A second rotation within the 24 h ends the older one at once (how a leaked secret is withdrawn). Unknown, another tenant's or deleted: NOT_FOUND",
  })
  async rotateWebhookSecret(@Arg("id", () => ID) id: string, @Ctx() ctx: GatewayContext): Promise<WebhookWithSecret> {
    const caller = requireTenant(ctx.principal, Permission.MANAGE);
    const { row, secret } = await ctx.services.webhooks.rotateSecret(caller.tenantId, parseArg(idArgSchema, "id", id));
    ctx.log.info({ tenantId: caller.tenantId, webhookId: row.id }, "webhook secret rotated");
    return { webhook: toWebhook(row), secret };
  }

  @Mutation(() => Boolean, { description: "stops deliveries at once, including retries already queued" })
  async deleteWebhook(@Arg("id", () => ID) id: string, @Ctx() ctx: GatewayContext): Promise<boolean> {
    const caller = requireTenant(ctx.principal, Permission.MANAGE);
    const deleted = await ctx.services.webhooks.delete(caller.tenantId, parseArg(idArgSchema, "id", id));
    ctx.log.info({ tenantId: caller.tenantId, webhookId: id }, "webhook deleted");
    return deleted;
  }
}
