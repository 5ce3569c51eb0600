/**
 * Webhook endpoints and their deliveries (contract: createWebhook,
 * deleteWebhook, webhooks, webhookDeliveries; gateway addition: updateWebhook).
 */
import { WEBHOOK_FIELDS } from "../graphql/fragments.js";
import type { CallOptions, GraphQLTransport } from "../transport.js";
import type { CreateWebhookInput, UpdateWebhookInput, Webhook, WebhookDelivery, WebhookWithSecret } from "../types.js";

const CREATE = `mutation CreateWebhook($input: CreateWebhookInput!) { createWebhook(input: $input) { webhook { ...WebhookFields } secret } }
${WEBHOOK_FIELDS}`;
const UPDATE = `mutation UpdateWebhook($id: ID!, $input: UpdateWebhookInput!) { updateWebhook(id: $id, input: $input) { ...WebhookFields } }
${WEBHOOK_FIELDS}`;
const DELETE = `mutation DeleteWebhook($id: ID!) { deleteWebhook(id: $id) }`;
const LIST = `query Webhooks { webhooks { ...WebhookFields } }
${WEBHOOK_FIELDS}`;
const DELIVERIES = `query WebhookDeliveries($webhookId: ID, $first: Int) {
  webhookDeliveries(webhookId: $webhookId, first: $first) {
    id webhookId event taskId status attempts lastResponseCode createdAt deliveredAt
  }
}`;

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

  async delete(id: string, opts?: CallOptions): Promise<boolean> {
    const data = await this.#transport.execute<{ deleteWebhook: boolean }>({ operation: "deleteWebhook", document: DELETE, idempotent: true }, { id }, opts);
    return data.deleteWebhook;
  }

  async list(opts?: CallOptions): Promise<Webhook[]> {
    const data = await this.#transport.execute<{ webhooks: Webhook[] }>({ operation: "webhooks", document: LIST, idempotent: true }, {}, opts);
    return data.webhooks;
  }

  async deliveries(options: { webhookId?: string | null; first?: number } = {}, opts?: CallOptions): Promise<WebhookDelivery[]> {
    const data = await this.#transport.execute<{ webhookDeliveries: WebhookDelivery[] }>(
      { operation: "webhookDeliveries", document: DELIVERIES, idempotent: true },
      { webhookId: options.webhookId, first: options.first },
      opts,
    );
    return data.webhookDeliveries;
  }
}
