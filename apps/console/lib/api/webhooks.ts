/** Webhook endpoints and their delivery log. */
import "server-only";
import { gql } from "../gateway";
import type { ApiResult } from "../graphql-error";
import type { DeliveryStatus } from "../statuses";
import type { Webhook, WebhookDelivery } from "./types";

/** What the console shows of an endpoint, the same in every answer. */
const WEBHOOK = "id url events enabled disabledReason previousSecretExpiresAt";

export async function listWebhooks(): Promise<ApiResult<Webhook[]>> {
  const result = await gql<{ webhooks: Webhook[] }>(`query ConsoleWebhooks { webhooks { ${WEBHOOK} } }`);
  return result.ok ? { ok: true, data: result.data.webhooks } : result;
}

export interface DeliveryPageInput {
  status?: DeliveryStatus | undefined;
  /** The last delivery of the page before (newest first): only older ones. */
  before?: string | undefined;
  first: number;
}

/** The tenant's delivery log (every endpoint's and the task callbacks'), newest first. */
export async function listDeliveries({ status, before, first }: DeliveryPageInput): Promise<ApiResult<WebhookDelivery[]>> {
  const result = await gql<{ webhookDeliveries: WebhookDelivery[] }>(
    `query ConsoleDeliveries($first: Int, $status: WebhookDeliveryStatus, $before: ID) {
      webhookDeliveries(first: $first, status: $status, before: $before) { id webhookId event taskId status attempts lastResponseCode lastError createdAt deliveredAt nextAttemptAt }
    }`,
    { first, status: status ?? null, before: before ?? null },
  );
  return result.ok ? { ok: true, data: result.data.webhookDeliveries } : result;
}

export async function createWebhook(url: string, events: string[]): Promise<ApiResult<{ webhook: Webhook; secret: string }>> {
  const result = await gql<{ createWebhook: { webhook: Webhook; secret: string } }>(
    `mutation ConsoleCreateWebhook($input: CreateWebhookInput!) { createWebhook(input: $input) { webhook { ${WEBHOOK} } secret } }`,
    { input: { url, events } },
  );
  return result.ok ? { ok: true, data: result.data.createWebhook } : result;
}

/** Re-enabling keeps the endpoint's secret and clears why it was disabled. */
export async function setWebhookEnabled(id: string, enabled: boolean): Promise<ApiResult<Webhook>> {
  const result = await gql<{ updateWebhook: Webhook }>(
    `mutation ConsoleSetWebhookEnabled($id: ID!, $input: UpdateWebhookInput!) { updateWebhook(id: $id, input: $input) { ${WEBHOOK} } }`,
    { id, input: { enabled } },
  );
  return result.ok ? { ok: true, data: result.data.updateWebhook } : result;
}

/**
 * A new signing secret, shown once; the one it replaces keeps signing beside it for 24 h.
 * Sent once: a repeat would rotate twice and end the secret receivers still use.
 */
export async function rotateWebhookSecret(id: string): Promise<ApiResult<{ webhook: Webhook; secret: string }>> {
  const result = await gql<{ rotateWebhookSecret: { webhook: Webhook; secret: string } }>(
    `mutation ConsoleRotateWebhookSecret($id: ID!) { rotateWebhookSecret(id: $id) { webhook { ${WEBHOOK} } secret } }`,
    { id },
  );
  return result.ok ? { ok: true, data: result.data.rotateWebhookSecret } : result;
}

export async function deleteWebhook(id: string): Promise<ApiResult<boolean>> {
  const result = await gql<{ deleteWebhook: boolean }>(`mutation ConsoleDeleteWebhook($id: ID!) { deleteWebhook(id: $id) }`, { id });
  return result.ok ? { ok: true, data: result.data.deleteWebhook } : result;
}
