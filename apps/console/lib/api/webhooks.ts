/** Webhook endpoints and their delivery log. */
import "server-only";
import { gql } from "../gateway";
import type { ApiResult } from "../graphql-error";
import type { Webhook, WebhookDelivery } from "./types";

export async function listWebhooks(): Promise<ApiResult<Webhook[]>> {
  const result = await gql<{ webhooks: Webhook[] }>(`query ConsoleWebhooks { webhooks { id url events enabled } }`);
  return result.ok ? { ok: true, data: result.data.webhooks } : result;
}

export async function listDeliveries(webhookId: string | undefined, first: number): Promise<ApiResult<WebhookDelivery[]>> {
  const result = await gql<{ webhookDeliveries: WebhookDelivery[] }>(
    `query ConsoleDeliveries($webhookId: ID, $first: Int) {
      webhookDeliveries(webhookId: $webhookId, first: $first) { id webhookId event taskId status attempts lastResponseCode createdAt deliveredAt }
    }`,
    { webhookId: webhookId ?? null, first },
  );
  return result.ok ? { ok: true, data: result.data.webhookDeliveries } : result;
}

export async function createWebhook(url: string, events: string[]): Promise<ApiResult<{ webhook: Webhook; secret: string }>> {
  const result = await gql<{ createWebhook: { webhook: Webhook; secret: string } }>(
    `mutation ConsoleCreateWebhook($input: CreateWebhookInput!) { createWebhook(input: $input) { webhook { id url events enabled } secret } }`,
    { input: { url, events } },
  );
  return result.ok ? { ok: true, data: result.data.createWebhook } : result;
}

export async function deleteWebhook(id: string): Promise<ApiResult<boolean>> {
  const result = await gql<{ deleteWebhook: boolean }>(`mutation ConsoleDeleteWebhook($id: ID!) { deleteWebhook(id: $id) }`, { id });
  return result.ok ? { ok: true, data: result.data.deleteWebhook } : result;
}
