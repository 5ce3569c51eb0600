-- rotateWebhookSecret (Svix's and Stripe's endpoint secret roll): the secret a
-- rotation replaced keeps signing the endpoint's deliveries, beside the new
-- one, until previous_secret_expires_at (24 h), so a receiver can switch
-- without dropping a delivery. Null when the endpoint was never rotated, and
-- cleared with the secret when it is deleted.
-- AlterTable
ALTER TABLE "webhooks" ADD COLUMN     "previous_secret" TEXT,
ADD COLUMN     "previous_secret_expires_at" TIMESTAMPTZ(3);
