/** Webhook endpoints and deliveries — placeholder until the notifier issue replaces it. */
import { Arg, Ctx, ID, Int, Mutation, Query, Resolver } from "type-graphql";
import { Permission } from "../../auth/scopes.js";
import type { GatewayContext } from "../context.js";
import { CreateWebhookInput, Webhook, WebhookDelivery, WebhookWithSecret } from "../types/webhook.js";
import { notAvailableYet } from "./not-available.js";

@Resolver(() => Webhook)
export class WebhookResolver {
  @Query(() => [Webhook])
  webhooks(@Ctx() ctx: GatewayContext): Promise<Webhook[]> {
    return notAvailableYet(ctx, "webhooks", Permission.READ);
  }

  @Query(() => [WebhookDelivery])
  webhookDeliveries(
    @Arg("webhookId", () => ID, { nullable: true }) _webhookId: string | null,
    @Arg("first", () => Int, { nullable: true }) _first: number | null,
    @Ctx() ctx: GatewayContext,
  ): Promise<WebhookDelivery[]> {
    return notAvailableYet(ctx, "webhookDeliveries", Permission.READ);
  }

  @Mutation(() => WebhookWithSecret)
  createWebhook(@Arg("input", () => CreateWebhookInput) _input: CreateWebhookInput, @Ctx() ctx: GatewayContext): Promise<WebhookWithSecret> {
    return notAvailableYet(ctx, "createWebhook", Permission.MANAGE);
  }

  @Mutation(() => Boolean)
  deleteWebhook(@Arg("id", () => ID) _id: string, @Ctx() ctx: GatewayContext): Promise<boolean> {
    return notAvailableYet(ctx, "deleteWebhook", Permission.MANAGE);
  }
}
