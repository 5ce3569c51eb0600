import { DEPTH_STATUSES, readQueueDepth } from "@tasklane/db";
import type { SchedulerContext } from "../context.js";

/** How often the gauges are recomputed: finer than a typical 15–30 s scrape, cheap as one query. */
export const QUEUE_DEPTH_INTERVAL_MS = 10_000;

const MODES = ["PUSH", "PULL"] as const;

/**
 * Recomputes the backlog gauges from Postgres (the source of truth, so the
 * figures survive a Redis wipe). Gauges are reset first so a queue that
 * emptied stops being reported instead of freezing at its last value.
 */
export async function measureQueueDepth(ctx: SchedulerContext): Promise<void> {
  const perTenant = ctx.env.METRICS_TENANT_LABELS;
  const rows = await readQueueDepth(ctx.db, { perTenant });
  const { queueDepth, oldestQueuedAge, deadLetterTasks } = ctx.metrics;
  queueDepth.reset();
  oldestQueuedAge.reset();
  deadLetterTasks.reset();
  // Zero rather than absent: an autoscaler or alert querying an empty backlog must see 0, not "no data"
  // (KEDA's worker trigger, with ignoreNullValues "false", would hold its fallback size instead of scaling in).
  // With tenant labels the zeros carry empty ones, which Prometheus reads as no label: they add 0 to any sum.
  const noTenant = perTenant ? { tenant: "", queue: "" } : {};
  for (const mode of MODES) {
    for (const status of DEPTH_STATUSES) if (status !== "DEAD") queueDepth.set({ ...noTenant, mode, status }, 0);
    deadLetterTasks.set({ ...noTenant, mode }, 0);
    oldestQueuedAge.set({ ...noTenant, mode }, 0);
  }
  // Several status rows share one age series: keep the largest wait of each.
  const oldest = new Map<string, { labels: Record<string, string>; seconds: number }>();
  for (const row of rows) {
    const labels: Record<string, string> = perTenant ? { mode: row.mode, tenant: row.tenantId ?? "", queue: row.queue ?? "" } : { mode: row.mode };
    if (row.status === "DEAD") deadLetterTasks.inc(labels, row.tasks);
    else queueDepth.inc({ ...labels, status: row.status }, row.tasks);
    if (row.oldestWaitSeconds === null) continue;
    const key = JSON.stringify(labels);
    const seen = oldest.get(key);
    if (!seen || seen.seconds < row.oldestWaitSeconds) oldest.set(key, { labels, seconds: Math.max(0, row.oldestWaitSeconds) });
  }
  for (const { labels, seconds } of oldest.values()) oldestQueuedAge.set(labels, seconds);
  ctx.metrics.backlogCollected.set(Date.now() / 1000);
}
