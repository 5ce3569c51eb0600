-- CreateTable
CREATE TABLE "event_relay_cursors" (
    "name" TEXT NOT NULL,
    "last_event_id" BIGINT NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "event_relay_cursors_pkey" PRIMARY KEY ("name")
);
