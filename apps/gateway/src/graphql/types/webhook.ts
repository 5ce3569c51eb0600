/** Webhook endpoints and deliveries (contract: CreateWebhookInput, Webhook, WebhookWithSecret, WebhookDelivery; added: UpdateWebhookInput). */
import { Field, ID, InputType, Int, ObjectType, registerEnumType } from "type-graphql";
import { DateTimeScalar } from "./scalars.js";

/** WebhookDelivery.status's values (a String in the contract), as webhookDeliveries' status filter takes them. */
export const WebhookDeliveryStatus = {
  /** Waiting for an attempt (due now or at its next retry) or in one. */
  PENDING: "PENDING",
  /** A 2xx answered; a redelivery sends it again. */
  DELIVERED: "DELIVERED",
  /** The retry schedule ran out, the endpoint answered 410, or it was never sent (webhook disabled or deleted, target refused); redeliverable. */
  FAILED: "FAILED",
} as const;
export type WebhookDeliveryStatus = (typeof WebhookDeliveryStatus)[keyof typeof WebhookDeliveryStatus];
registerEnumType(WebhookDeliveryStatus, {
  name: "WebhookDeliveryStatus",
  description: "a webhook or callback delivery's status, as WebhookDelivery.status spells it",
  valuesConfig: {
    PENDING: { description: "waiting for an attempt (due now or at its next retry) or in one" },
    DELIVERED: { description: "a 2xx answered; redeliverWebhookDelivery sends it again" },
    FAILED: { description: "the retry schedule ran out, the endpoint answered 410 Gone, or it was never sent (webhook disabled or deleted, target refused); redeliverable" },
  },
});

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

  @Field(() => DateTimeScalar, { nullable: true, description: "until when the secret the last rotateWebhookSecret replaced still signs deliveries beside the current one; null when none does" })
  previousSecretExpiresAt!: Date | null;

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

  @Field(() => Int, { description: "every attempt made, redeliveries' included" })
  attempts!: number;

  @Field(() => Int, { nullable: true })
  lastResponseCode!: number | null;

  @Field(() => String, { nullable: true, description: "why the last attempt failed (network error, timeout, refused target, response excerpt)" })
  lastError!: string | null;

  @Field(() => DateTimeScalar)
  createdAt!: Date;

  @Field(() => DateTimeScalar, { nullable: true })
  deliveredAt!: Date | null;

  @Field(() => DateTimeScalar, {
    nullable: true,
    description: "PENDING: when its next attempt is due (WEBHOOK_RETRY_SCHEDULE, or later for a Retry-After); past while it is being sent or waits for a free slot. Null once DELIVERED or FAILED",
  })
  nextAttemptAt!: Date | null;
}
