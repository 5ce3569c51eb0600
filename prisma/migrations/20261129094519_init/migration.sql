-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateEnum
CREATE TYPE "TaskStatus" AS ENUM ('SCHEDULED', 'BLOCKED', 'QUEUED', 'RUNNING', 'RETRYING', 'SUCCEEDED', 'DEAD', 'CANCELLED', 'SKIPPED');

-- CreateEnum
CREATE TYPE "Priority" AS ENUM ('HIGH', 'NORMAL', 'LOW');

-- CreateEnum
CREATE TYPE "BackoffStrategy" AS ENUM ('EXPONENTIAL', 'LINEAR', 'FIXED');

-- CreateEnum
CREATE TYPE "QueueMode" AS ENUM ('PUSH', 'PULL');

-- CreateEnum
CREATE TYPE "MisfirePolicy" AS ENUM ('SKIP', 'FIRE_ONCE', 'CATCH_UP');

-- CreateEnum
CREATE TYPE "OverlapPolicy" AS ENUM ('ALLOW', 'SKIP', 'QUEUE', 'CANCEL_RUNNING');

-- CreateEnum
CREATE TYPE "WorkflowStatus" AS ENUM ('RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED');

-- CreateEnum
CREATE TYPE "AttemptOutcome" AS ENUM ('SUCCEEDED', 'FAILED', 'TIMED_OUT', 'LEASE_EXPIRED', 'CANCELLED');

-- CreateEnum
CREATE TYPE "OutboxKind" AS ENUM ('DISPATCH_TASK', 'NOTIFY');

-- CreateEnum
CREATE TYPE "DeliveryStatus" AS ENUM ('PENDING', 'DELIVERED', 'FAILED');

-- CreateTable
CREATE TABLE "tenants" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "weight" INTEGER NOT NULL DEFAULT 1,
    "max_concurrency" INTEGER,
    "api_rate_per_second" DOUBLE PRECISION NOT NULL DEFAULT 200,
    "api_burst" INTEGER NOT NULL DEFAULT 400,
    "max_pending_tasks" INTEGER,
    "daily_task_quota" INTEGER,
    "signing_secret" TEXT NOT NULL,
    "previous_signing_secret" TEXT,
    "previous_secret_expires_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "tenants_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "api_keys" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "secret_hash" TEXT NOT NULL,
    "scopes" TEXT[],
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_used_at" TIMESTAMPTZ(3),
    "revoked_at" TIMESTAMPTZ(3),

    CONSTRAINT "api_keys_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "console_users" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "password_hash" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "console_users_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "queues" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "mode" "QueueMode" NOT NULL,
    "endpoint_url" TEXT,
    "concurrency" INTEGER,
    "rate_limit_per_second" DOUBLE PRECISION,
    "rate_limit_burst" INTEGER,
    "paused" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "queues_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "tasks" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "queue_id" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "payload" JSONB,
    "status" "TaskStatus" NOT NULL,
    "priority" "Priority" NOT NULL DEFAULT 'NORMAL',
    "run_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "started_at" TIMESTAMPTZ(3),
    "completed_at" TIMESTAMPTZ(3),
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "max_attempts" INTEGER NOT NULL,
    "backoff_strategy" "BackoffStrategy" NOT NULL,
    "backoff_delay_seconds" DOUBLE PRECISION NOT NULL,
    "backoff_max_delay_seconds" DOUBLE PRECISION,
    "backoff_jitter" BOOLEAN NOT NULL,
    "timeout_seconds" INTEGER NOT NULL,
    "result" JSONB,
    "last_error" TEXT,
    "idempotency_key" TEXT,
    "ordering_key" TEXT,
    "callback_url" TEXT,
    "metadata" JSONB,
    "workflow_id" TEXT,
    "workflow_key" TEXT,
    "schedule_id" TEXT,
    "occurrence_key" TEXT,
    "cancel_requested" BOOLEAN NOT NULL DEFAULT false,
    "lease_generation" INTEGER NOT NULL DEFAULT 0,
    "lease_token" TEXT,
    "lease_expires_at" TIMESTAMPTZ(3),
    "worker_id" TEXT,
    "dispatch_generation" INTEGER NOT NULL DEFAULT 0,
    "enqueued_generation" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "tasks_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "task_attempts" (
    "id" BIGSERIAL NOT NULL,
    "task_id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "number" INTEGER NOT NULL,
    "worker_id" TEXT,
    "lease_token" TEXT,
    "started_at" TIMESTAMPTZ(3) NOT NULL,
    "finished_at" TIMESTAMPTZ(3),
    "outcome" "AttemptOutcome",
    "error" TEXT,

    CONSTRAINT "task_attempts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "task_events" (
    "id" BIGSERIAL NOT NULL,
    "task_id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "from_status" "TaskStatus",
    "to_status" "TaskStatus" NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "attempt" INTEGER NOT NULL,
    "lease_generation" INTEGER NOT NULL,
    "actor" TEXT NOT NULL,
    "reason" TEXT,

    CONSTRAINT "task_events_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "outbox" (
    "id" BIGSERIAL NOT NULL,
    "kind" "OutboxKind" NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "task_id" TEXT,
    "payload" JSONB,
    "available_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "attempts" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "outbox_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "schedules" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "cron" TEXT NOT NULL,
    "timezone" TEXT NOT NULL DEFAULT 'UTC',
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "version" INTEGER NOT NULL DEFAULT 1,
    "misfire_policy" "MisfirePolicy" NOT NULL DEFAULT 'SKIP',
    "overlap_policy" "OverlapPolicy" NOT NULL DEFAULT 'ALLOW',
    "template" JSONB NOT NULL,
    "next_run_at" TIMESTAMPTZ(3),
    "last_run_at" TIMESTAMPTZ(3),
    "deleted_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "schedules_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "workflows" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "status" "WorkflowStatus" NOT NULL DEFAULT 'RUNNING',
    "idempotency_key" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completed_at" TIMESTAMPTZ(3),

    CONSTRAINT "workflows_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "workflow_edges" (
    "workflow_id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "parent_key" TEXT NOT NULL,
    "child_key" TEXT NOT NULL,

    CONSTRAINT "workflow_edges_pkey" PRIMARY KEY ("workflow_id","parent_key","child_key")
);

-- CreateTable
CREATE TABLE "webhooks" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "events" TEXT[],
    "secret" TEXT NOT NULL,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "disabled_reason" TEXT,
    "failure_streak" INTEGER NOT NULL DEFAULT 0,
    "deleted_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhooks_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_deliveries" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "webhook_id" TEXT,
    "url" TEXT NOT NULL,
    "event" TEXT NOT NULL,
    "task_id" TEXT,
    "workflow_id" TEXT,
    "body" TEXT NOT NULL,
    "status" "DeliveryStatus" NOT NULL DEFAULT 'PENDING',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "last_response_code" INTEGER,
    "last_error" TEXT,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "locked_until" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "delivered_at" TIMESTAMPTZ(3),

    CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "tenant_daily_usage" (
    "tenant_id" TEXT NOT NULL,
    "day" DATE NOT NULL,
    "submitted" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "tenant_daily_usage_pkey" PRIMARY KEY ("tenant_id","day")
);

-- CreateIndex
CREATE UNIQUE INDEX "api_keys_prefix_key" ON "api_keys"("prefix");

-- CreateIndex
CREATE INDEX "api_keys_tenant_id_idx" ON "api_keys"("tenant_id");

-- CreateIndex
CREATE UNIQUE INDEX "console_users_email_key" ON "console_users"("email");

-- CreateIndex
CREATE INDEX "console_users_tenant_id_idx" ON "console_users"("tenant_id");

-- CreateIndex
CREATE UNIQUE INDEX "queues_tenant_id_name_key" ON "queues"("tenant_id", "name");

-- CreateIndex
CREATE INDEX "tasks_tenant_id_id_idx" ON "tasks"("tenant_id", "id" DESC);

-- CreateIndex
CREATE INDEX "tasks_tenant_id_status_id_idx" ON "tasks"("tenant_id", "status", "id" DESC);

-- CreateIndex
CREATE INDEX "tasks_queue_id_status_priority_run_at_idx" ON "tasks"("queue_id", "status", "priority", "run_at");

-- CreateIndex
CREATE INDEX "tasks_status_run_at_idx" ON "tasks"("status", "run_at");

-- CreateIndex
CREATE INDEX "tasks_status_lease_expires_at_idx" ON "tasks"("status", "lease_expires_at");

-- CreateIndex
CREATE INDEX "tasks_workflow_id_idx" ON "tasks"("workflow_id");

-- CreateIndex
CREATE INDEX "tasks_schedule_id_run_at_idx" ON "tasks"("schedule_id", "run_at" DESC);

-- CreateIndex
CREATE INDEX "tasks_tenant_id_ordering_key_id_idx" ON "tasks"("tenant_id", "ordering_key", "id");

-- CreateIndex
CREATE UNIQUE INDEX "tasks_tenant_id_idempotency_key_key" ON "tasks"("tenant_id", "idempotency_key");

-- CreateIndex
CREATE UNIQUE INDEX "tasks_occurrence_key_key" ON "tasks"("occurrence_key");

-- CreateIndex
CREATE INDEX "task_attempts_task_id_id_idx" ON "task_attempts"("task_id", "id");

-- CreateIndex
CREATE INDEX "task_attempts_tenant_id_idx" ON "task_attempts"("tenant_id");

-- CreateIndex
CREATE INDEX "task_events_task_id_id_idx" ON "task_events"("task_id", "id");

-- CreateIndex
CREATE INDEX "task_events_tenant_id_id_idx" ON "task_events"("tenant_id", "id");

-- CreateIndex
CREATE INDEX "outbox_kind_available_at_id_idx" ON "outbox"("kind", "available_at", "id");

-- CreateIndex
CREATE INDEX "schedules_enabled_next_run_at_idx" ON "schedules"("enabled", "next_run_at");

-- CreateIndex
CREATE UNIQUE INDEX "schedules_tenant_id_name_key" ON "schedules"("tenant_id", "name");

-- CreateIndex
CREATE INDEX "workflows_tenant_id_id_idx" ON "workflows"("tenant_id", "id" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "workflows_tenant_id_idempotency_key_key" ON "workflows"("tenant_id", "idempotency_key");

-- CreateIndex
CREATE INDEX "workflow_edges_workflow_id_child_key_idx" ON "workflow_edges"("workflow_id", "child_key");

-- CreateIndex
CREATE INDEX "webhooks_tenant_id_idx" ON "webhooks"("tenant_id");

-- CreateIndex
CREATE INDEX "webhook_deliveries_status_next_attempt_at_idx" ON "webhook_deliveries"("status", "next_attempt_at");

-- CreateIndex
CREATE INDEX "webhook_deliveries_tenant_id_created_at_idx" ON "webhook_deliveries"("tenant_id", "created_at" DESC);

-- CreateIndex
CREATE INDEX "webhook_deliveries_webhook_id_created_at_idx" ON "webhook_deliveries"("webhook_id", "created_at" DESC);

-- AddForeignKey
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "console_users" ADD CONSTRAINT "console_users_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "queues" ADD CONSTRAINT "queues_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "tasks" ADD CONSTRAINT "tasks_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "tasks" ADD CONSTRAINT "tasks_queue_id_fkey" FOREIGN KEY ("queue_id") REFERENCES "queues"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "tasks" ADD CONSTRAINT "tasks_workflow_id_fkey" FOREIGN KEY ("workflow_id") REFERENCES "workflows"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "tasks" ADD CONSTRAINT "tasks_schedule_id_fkey" FOREIGN KEY ("schedule_id") REFERENCES "schedules"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "task_attempts" ADD CONSTRAINT "task_attempts_task_id_fkey" FOREIGN KEY ("task_id") REFERENCES "tasks"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "task_events" ADD CONSTRAINT "task_events_task_id_fkey" FOREIGN KEY ("task_id") REFERENCES "tasks"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "schedules" ADD CONSTRAINT "schedules_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "workflows" ADD CONSTRAINT "workflows_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "workflow_edges" ADD CONSTRAINT "workflow_edges_workflow_id_fkey" FOREIGN KEY ("workflow_id") REFERENCES "workflows"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhooks" ADD CONSTRAINT "webhooks_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_webhook_id_fkey" FOREIGN KEY ("webhook_id") REFERENCES "webhooks"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "tenant_daily_usage" ADD CONSTRAINT "tenant_daily_usage_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Tasks whose current dispatch generation has not reached Redis yet: the
-- horizon promoter scans only these.
CREATE INDEX "tasks_awaiting_dispatch_idx" ON "tasks" ("run_at") WHERE "enqueued_generation" < "dispatch_generation" AND "status" IN ('QUEUED', 'SCHEDULED', 'RETRYING');
