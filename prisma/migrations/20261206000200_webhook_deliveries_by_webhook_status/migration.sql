-- The same for one webhook: webhookDeliveries(webhookId:, status:, before:)
-- and redeliverWebhookDeliveries (a webhook's FAILED rows since a time). A
-- webhook with no FAILED rows among 10,000 took 53 ms to say so; here 0.1 ms.
-- CONCURRENTLY, in a migration of its own (see the previous migration).
CREATE INDEX CONCURRENTLY "webhook_deliveries_webhook_status_created_idx" ON "webhook_deliveries" ("webhook_id", "status", "created_at" DESC, "id" DESC);
