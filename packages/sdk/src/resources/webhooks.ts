/**
 * Webhook endpoints and their deliveries (contract: createWebhook,
 * deleteWebhook, webhooks, webhookDeliveries; gateway additions: updateWebhook,
 * rotateWebhookSecret, redeliverWebhookDelivery, redeliverWebhookDeliveries).
 */
import { WEBHOOK_FIELDS } from "../graphql/fragments.js";
import type { CallOptions, GraphQLTransport } from "../transport.js";
import { deleteCall } from "./delete-call.js";
import type { CreateWebhookInput, DateTimeInput, UpdateWebhookInput, Webhook, WebhookDeliveriesOptions, WebhookDelivery, WebhookWithSecret } from "../types.js";
import { asIso, checkLocally } from "../validate.js";

const CREATE = `mutation CreateWebhook($input: CreateWebhookInput!) { createWebhook(input: $input) { webhook { ...WebhookFields } secret } }
${WEBHOOK_FIELDS}`;
const UPDATE = `mutation UpdateWebhook($id: ID!, $input: UpdateWebhookInput!) { updateWebhook(id: $id, input: $input) { ...WebhookFields } }
${WEBHOOK_FIELDS}`;
const ROTATE = `mutation RotateWebhookSecret($id: ID!) { rotateWebhookSecret(id: $id) { webhook { ...WebhookFields } secret } }
${WEBHOOK_FIELDS}`;
const DELETE = `mutation DeleteWebhook($id: ID!) { deleteWebhook(id: $id) }`;
const LIST = `query Webhooks { webhooks { ...WebhookFields } }
${WEBHOOK_FIELDS}`;
const DELIVERY_FIELDS = `fragment DeliveryFields on WebhookDelivery {
  id webhookId event taskId status attempts lastResponseCode lastError createdAt deliveredAt nextAttemptAt
}`;
const DELIVERIES = `query WebhookDeliveries($webhookId: ID, $first: Int, $before: ID, $status: WebhookDeliveryStatus) {
  webhookDeliveries(webhookId: $webhookId, first: $first, before: $before, status: $status) { ...DeliveryFields }
}
${DELIVERY_FIELDS}`;
const REDELIVER = `mutation RedeliverWebhookDelivery($id: ID!) { redeliverWebhookDelivery(id: $id) { ...DeliveryFields } }
${DELIVERY_FIELDS}`;
const REDELIVER_SINCE = `mutation RedeliverWebhookDeliveries($webhookId: ID!, $since: DateTime!) { redeliverWebhookDeliveries(webhookId: $webhookId, since: $since) }`;

export class WebhooksResource {
  readonly #transport: GraphQLTransport;

  constructor(transport: GraphQLTransport) {
    this.#transport = transport;
  }

  /** The secret is shown once: store it to verify deliveries. */
  async create(input: CreateWebhookInput, opts?: CallOptions): Promise<WebhookWithSecret> {
    const data = await this.#transport.execute<{ createWebhook: WebhookWithSecret }>(
      { operation: "createWebhook", document: CREATE, idempotent: false },
      { input },
      opts,
    );
    return data.createWebhook;
  }

  /**
   * Omitted or null fields are left as they are. `enabled: true` re-enables an
   * endpoint the platform disabled (410 Gone, too many failures), keeping its
   * secret and clearing `disabledReason` and `failureStreak`.
   */
  async update(id: string, input: UpdateWebhookInput, opts?: CallOptions): Promise<Webhook> {
    const data = await this.#transport.execute<{ updateWebhook: Webhook }>({ operation: "updateWebhook", document: UPDATE, idempotent: true }, { id, input }, opts);
    return data.updateWebhook;
  }

  /**
   * A new signing secret for the endpoint, shown once: it signs from the next attempt, and the
   * one it replaces keeps signing beside it for 24 h (`webhook.previousSecretExpiresAt`), so
   * receivers can switch without dropping a delivery. Rotating again within those 24 h ends the
   * older secret at once (a leaked one). Unknown, another tenant's or deleted: NOT_FOUND.
   */
  async rotateSecret(id: string, opts?: CallOptions): Promise<WebhookWithSecret> {
    // Not idempotent: a repeat after a lost answer would rotate twice, so the secret receivers
    // still verify with would stop signing at once and the one the lost answer carried is never seen.
    const data = await this.#transport.execute<{ rotateWebhookSecret: WebhookWithSecret }>(
      { operation: "rotateWebhookSecret", document: ROTATE, idempotent: false },
      { id },
      opts,
    );
    return data.rotateWebhookSecret;
  }

  async delete(id: string, opts?: CallOptions): Promise<boolean> {
    return deleteCall(this.#transport, "deleteWebhook", DELETE, { id }, opts);
  }

  async list(opts?: CallOptions): Promise<Webhook[]> {
    const data = await this.#transport.execute<{ webhooks: Webhook[] }>({ operation: "webhooks", document: LIST, idempotent: true }, {}, opts);
    return data.webhooks;
  }

  /** Newest first; page on with `before`, the last id of the previous page. */
  async deliveries(options: WebhookDeliveriesOptions = {}, opts?: CallOptions): Promise<WebhookDelivery[]> {
    const data = await this.#transport.execute<{ webhookDeliveries: WebhookDelivery[] }>(
      { operation: "webhookDeliveries", document: DELIVERIES, idempotent: true },
      { webhookId: options.webhookId, first: options.first, before: options.before, status: options.status },
      opts,
    );
    return data.webhookDeliveries;
  }

  /**
   * Sends a finished delivery (FAILED, or DELIVERED to send it again) anew, with the same body
   * and webhook-id header. A PENDING one, or one whose webhook is deleted or disabled, is CONFLICT.
   */
  async redeliver(deliveryId: string, opts?: CallOptions): Promise<WebhookDelivery> {
    // Not repeated after an ambiguous failure: a delivery sent meanwhile would be sent once more.
    const data = await this.#transport.execute<{ redeliverWebhookDelivery: WebhookDelivery }>(
      { operation: "redeliverWebhookDelivery", document: REDELIVER, idempotent: false },
      { id: deliveryId },
      opts,
    );
    return data.redeliverWebhookDelivery;
  }

  /**
   * After an outage: the webhook's FAILED deliveries created at or after `since` go back to
   * PENDING, oldest first; answers how many (at most 10,000 a call: call again while it answers that).
   */
  async redeliverSince(webhookId: string, since: DateTimeInput, opts?: CallOptions): Promise<number> {
    let wireSince: string | null | undefined;
    checkLocally("redeliverWebhookDeliveries", () => {
      wireSince = asIso(since, "since");
    });
    const data = await this.#transport.execute<{ redeliverWebhookDeliveries: number }>(
      { operation: "redeliverWebhookDeliveries", document: REDELIVER_SINCE, idempotent: false },
      { webhookId, since: wireSince },
      opts,
    );
    return data.redeliverWebhookDeliveries;
  }
}
