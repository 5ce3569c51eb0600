/** Webhook endpoints and deliveries (contract: CreateWebhookInput, Webhook, WebhookWithSecret, WebhookDelivery; added: UpdateWebhookInput). */
import { Field, ID, InputType, Int, ObjectType } from "type-graphql";
import { DateTimeScalar } from "./scalars.js";

@InputType("CreateWebhookInput")
export class CreateWebhookInput {
  @Field(() => String)
  url!: string;

  @Field(() => [String], { description: 'e.g. task.succeeded, task.dead, task.cancelled, workflow.completed; "*" for all' })
  events!: string[];
}

@InputType("UpdateWebhookInput", { description: "null or omitted: left as it is" })
export class UpdateWebhookInput {
  @Field(() => String, { nullable: true, description: "checked like createWebhook's; deliveries still pending go to the new URL" })
  url?: string | null;

  @Field(() => [String], { nullable: true, description: 'e.g. task.succeeded, task.dead, task.cancelled, workflow.completed; "*" for all' })
  events?: string[] | null;

  @Field(() => Boolean, {
    nullable: true,
    description: "true re-enables a disabled endpoint, clearing disabledReason and failureStreak (events while it was disabled are not sent); false stops deliveries, including retries already queued",
  })
  enabled?: boolean | null;
}

@ObjectType("Webhook", { simpleResolvers: true })
export class Webhook {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  url!: string;

  @Field(() => [String])
  events!: string[];

  @Field(() => Boolean, { description: "false once disabled (see disabledReason) or deleted" })
  enabled!: boolean;

  @Field(() => String, { nullable: true, description: "why the endpoint was disabled, e.g. after too many consecutive failed attempts or a 410 Gone" })
  disabledReason!: string | null;

  @Field(() => Int, { description: "consecutive failed delivery attempts; reset by a success" })
  failureStreak!: number;

  @Field(() => DateTimeScalar)
  createdAt!: Date;
}

@ObjectType("WebhookWithSecret", { simpleResolvers: true })
export class WebhookWithSecret {
  @Field(() => Webhook)
  webhook!: Webhook;

  @Field(() => String, { description: "shown once; signs deliveries" })
  secret!: string;
}

@ObjectType("WebhookDelivery", { simpleResolvers: true })
export class WebhookDelivery {
  @Field(() => ID)
  id!: string;

  @Field(() => ID, { nullable: true })
  webhookId!: string | null;

  @Field(() => String)
  event!: string;

  @Field(() => ID, { nullable: true })
  taskId!: string | null;

  @Field(() => String, { description: "PENDING, DELIVERED, FAILED" })
  status!: string;

  @Field(() => Int)
  attempts!: number;

  @Field(() => Int, { nullable: true })
  lastResponseCode!: number | null;

  @Field(() => String, { nullable: true, description: "why the last attempt failed (network error, timeout, refused target, response excerpt)" })
  lastError!: string | null;

  @Field(() => DateTimeScalar)
  createdAt!: Date;

  @Field(() => DateTimeScalar, { nullable: true })
  deliveredAt!: Date | null;
}
