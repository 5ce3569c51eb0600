/** Webhook endpoints and their delivery log. */
import "server-only";
import { gql } from "../gateway";
import type { ApiResult } from "../graphql-error";
import type { Webhook, WebhookDelivery } from "./types";

export async function listWebhooks(): Promise<ApiResult<Webhook[]>> {
  const result = await gql<{ webhooks: Webhook[] }>(`query ConsoleWebhooks { webhooks { id url events enabled disabledReason } }`);
  return result.ok ? { ok: true, data: result.data.webhooks } : result;
}

export async function listDeliveries(webhookId: string | undefined, first: number): Promise<ApiResult<WebhookDelivery[]>> {
  const result = await gql<{ webhookDeliveries: WebhookDelivery[] }>(
    `query ConsoleDeliveries($webhookId: ID, $first: Int) {
      webhookDeliveries(webhookId: $webhookId, first: $first) { id webhookId event taskId status attempts lastResponseCode lastError createdAt deliveredAt }
    }`,
    { webhookId: webhookId ?? null, first },
  );
  return result.ok ? { ok: true, data: result.data.webhookDeliveries } : result;
}

export async function createWebhook(url: string, events: string[]): Promise<ApiResult<{ webhook: Webhook; secret: string }>> {
  const result = await gql<{ createWebhook: { webhook: Webhook; secret: string } }>(
    `mutation ConsoleCreateWebhook($input: CreateWebhookInput!) { createWebhook(input: $input) { webhook { id url events enabled disabledReason } secret } }`,
    { input: { url, events } },
  );
  return result.ok ? { ok: true, data: result.data.createWebhook } : result;
}

/** Re-enabling keeps the endpoint's secret and clears why it was disabled. */
export async function setWebhookEnabled(id: string, enabled: boolean): Promise<ApiResult<Webhook>> {
  const result = await gql<{ updateWebhook: Webhook }>(
    `mutation ConsoleSetWebhookEnabled($id: ID!, $input: UpdateWebhookInput!) { updateWebhook(id: $id, input: $input) { id url events enabled disabledReason } }`,
    { id, input: { enabled } },
  );
  return result.ok ? { ok: true, data: result.data.updateWebhook } : result;
}

export async function deleteWebhook(id: string): Promise<ApiResult<boolean>> {
  const result = await gql<{ deleteWebhook: boolean }>(`mutation ConsoleDeleteWebhook($id: ID!) { deleteWebhook(id: $id) }`, { id });
  return result.ok ? { ok: true, data: result.data.deleteWebhook } : result;
}
