import { pruneCredentials, pruneDailyUsage, pruneFinished } from "@tasklane/db";
import type { SchedulerContext } from "../context.js";

/**
 * Retention: finished tasks older than TASK_RETENTION_DAYS go, with their
 * attempts and audit events (and finished workflows and settled deliveries
 * as old), as do API keys revoked and webhooks deleted that long ago (a
 * deleted webhook once no delivery names it); daily submission counters go
 * once their day is over and expired console session keys a week after
 * expiry, whatever the retention (they are counters and spent credentials,
 * not history). One bounded pass per tick; a full pass asks for the next at
 * once, so a backlog drains in 1,000-row statements rather than one long
 * one. Any number of schedulers may run it: rows are claimed with SKIP LOCKED.
 */
export async function pruneExpiredTasks(ctx: SchedulerContext): Promise<boolean> {
  const usage = await pruneDailyUsage(ctx.db);
  if (usage.pruned > 0) ctx.metrics.retentionPruned.inc({ table: "tenant_daily_usage" }, usage.pruned);
  const credentials = await pruneCredentials(ctx.db, ctx.env.TASK_RETENTION_DAYS);
  if (credentials.pruned.apiKeys > 0) ctx.metrics.retentionPruned.inc({ table: "api_keys" }, credentials.pruned.apiKeys);
  if (credentials.pruned.webhooks > 0) ctx.metrics.retentionPruned.inc({ table: "webhooks" }, credentials.pruned.webhooks);
  if (ctx.env.TASK_RETENTION_DAYS === 0) return usage.full || credentials.full;
  const { pruned, full } = await pruneFinished(ctx.db, ctx.env.TASK_RETENTION_DAYS);
  for (const [table, n] of Object.entries(pruned)) if (n > 0) ctx.metrics.retentionPruned.inc({ table }, n);
  if (pruned.tasks > 0 || pruned.workflows > 0 || pruned.deliveries > 0) ctx.log.info({ ...pruned, retentionDays: ctx.env.TASK_RETENTION_DAYS }, "retention pruned old finished tasks");
  return full || usage.full || credentials.full;
}
