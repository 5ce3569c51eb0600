-- A deleted webhook endpoint's secret is dropped when it is deleted
-- (WebhookService.delete); endpoints deleted before that lose theirs here.
-- Nothing signs with a deleted endpoint's secret: its pending deliveries are
-- abandoned by the notifier, and the secret is never shown again.
UPDATE "webhooks" SET "secret" = '' WHERE "deleted_at" IS NOT NULL AND "secret" <> '';
