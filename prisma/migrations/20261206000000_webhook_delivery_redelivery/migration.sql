-- Redelivery (redeliverWebhookDelivery, redeliverWebhookDeliveries) puts a
-- finished delivery back to PENDING for a fresh round of attempts while its
-- attempt count stays as history. The notifier's retry schedule counts the
-- attempts of the current round: attempts - round_start_attempts. A constant
-- default: no table rewrite.
ALTER TABLE "webhook_deliveries" ADD COLUMN "round_start_attempts" INTEGER NOT NULL DEFAULT 0;
