/**
 * The scheduler's Prometheus metrics, on its own registry (never the global
 * one, so several instances can live in one test process).
 *
 * Label rule: only bounded labels. `status`, `mode` and `reason` have a
 * handful of values; `tenant` and `queue` grow with customers and appear only
 * with METRICS_TENANT_LABELS=1 (see docs/operations.md).
 */
import { Counter, Gauge, Registry } from "prom-client";
import type { PrunedRows } from "@tasklane/db";
import { collectProcessMetrics, countFromZero, labelValues } from "@tasklane/observability";

/** What the retention job deletes: finished tasks' rows, daily usage counters, revoked keys and deleted webhooks. */
export type RetentionTable = keyof PrunedRows | "tenant_daily_usage" | "api_keys" | "webhooks";
/** Every `table` of tasklane_retention_pruned_rows_total. */
export const RETENTION_TABLES = labelValues<RetentionTable>({
  tasks: true,
  attempts: true,
  events: true,
  workflows: true,
  deliveries: true,
  tenant_daily_usage: true,
  api_keys: true,
  webhooks: true,
});
/**
 * Every `outcome` of tasklane_pull_timeouts_total, named as the worker's
 * tasklane_task_outcomes_total names a PUSH timeout: `timed_out` when a retry
 * follows, `dead` when the timeout ended the task.
 */
export const PULL_TIMEOUT_OUTCOMES = labelValues({ timed_out: true, dead: true });
/** Every `reason` of tasklane_reconciler_readded_total. */
export const READD_REASONS = labelValues({ rebuild: true, sweep: true });

export interface SchedulerMetrics {
  readonly registry: Registry;
  /** Outbox rows the safety-net dispatcher moved to Redis (the writers' fast path is not counted). */
  readonly outboxDispatched: Counter;
  /** RUNNING tasks whose lease ran out (executor died or stalled): attempt outcome LEASE_EXPIRED only. */
  readonly leaseExpirations: Counter;
  /**
   * PULL attempts whose lease ran to the task's timeout (attempt outcome
   * TIMED_OUT): a slow handler, which must not read as dying executors.
   */
  readonly pullTimeouts: Counter<"outcome">;
  /** Cron occurrences materialised as tasks. */
  readonly schedulesFired: Counter;
  /** Jobs the reconciler put back into Redis: `rebuild` after a lost epoch, `sweep` for single missing jobs. */
  readonly reconcilerReadded: Counter<"reason">;
  /** Unfinished tasks by status and queue mode (PUSH work is what the worker fleet serves). */
  readonly queueDepth: Gauge<string>;
  /** Wait past runAt of the oldest runnable task, by queue mode. */
  readonly oldestQueuedAge: Gauge<string>;
  /** DEAD tasks (the dead-letter queue), by queue mode. */
  readonly deadLetterTasks: Gauge<string>;
  /**
   * When the backlog gauges were last computed (Unix seconds; 0 before the
   * first time). They keep their last values while Postgres is unreachable,
   * so an alert on this is how staleness shows.
   */
  readonly backlogCollected: Gauge;
  /** Rows the retention job deleted, by table (RETENTION_TABLES). */
  readonly retentionPruned: Counter<"table">;
}

export function createSchedulerMetrics(tenantLabels: boolean): SchedulerMetrics {
  const registry = new Registry();
  registry.setDefaultLabels({ app: "scheduler" });
  collectProcessMetrics(registry);
  const gaugeLabels = tenantLabels ? ["mode", "tenant", "queue"] : ["mode"];
  const counter = (name: string, help: string) => new Counter({ name, help, registers: [registry] });
  const reconcilerReadded = new Counter({
    name: "tasklane_reconciler_readded_total",
    help: "Jobs re-added to Redis by the reconciler, by reason (rebuild, sweep)",
    labelNames: ["reason"] as const,
    registers: [registry],
  });
  countFromZero(reconcilerReadded, "reason", READD_REASONS);
  const retentionPruned = new Counter({
    name: "tasklane_retention_pruned_rows_total",
    help: "Rows deleted by the retention job (TASK_RETENTION_DAYS), by table",
    labelNames: ["table"] as const,
    registers: [registry],
  });
  countFromZero(retentionPruned, "table", RETENTION_TABLES);
  const pullTimeouts = new Counter({
    name: "tasklane_pull_timeouts_total",
    help: "PULL attempts ended TIMED_OUT by lease expiry (the task's timeout elapsed), by outcome (timed_out: retried; dead: the task ended)",
    labelNames: ["outcome"] as const,
    registers: [registry],
  });
  countFromZero(pullTimeouts, "outcome", PULL_TIMEOUT_OUTCOMES);
  return {
    registry,
    outboxDispatched: counter("tasklane_outbox_dispatched_total", "Tasks dispatched to Redis by the scheduler's outbox loop (the safety net; writers' own post-commit dispatch is not counted)"),
    leaseExpirations: counter(
      "tasklane_lease_expirations_total",
      "Leases that expired with the executor gone or stalled (attempt outcome LEASE_EXPIRED; PULL timeouts are tasklane_pull_timeouts_total)",
    ),
    pullTimeouts,
    schedulesFired: counter("tasklane_schedules_fired_total", "Cron occurrences materialised as tasks"),
    reconcilerReadded,
    queueDepth: new Gauge({
      name: "tasklane_queue_depth",
      help: "Unfinished tasks by status (every scheduler reports the same totals: aggregate with max)",
      labelNames: ["status", ...gaugeLabels],
      registers: [registry],
    }),
    oldestQueuedAge: new Gauge({
      name: "tasklane_oldest_queued_age_seconds",
      help: "Seconds the oldest runnable task has waited past its runAt (paused queues excluded)",
      labelNames: gaugeLabels,
      registers: [registry],
    }),
    retentionPruned,
    deadLetterTasks: new Gauge({
      name: "tasklane_dead_letter_tasks",
      help: "Tasks in the dead-letter queue (status DEAD)",
      labelNames: gaugeLabels,
      registers: [registry],
    }),
    backlogCollected: new Gauge({
      name: "tasklane_backlog_collected_timestamp_seconds",
      help: "Unix time the backlog gauges (queue depth, oldest queued age, dead letters) were last computed from Postgres; 0 before the first time",
      registers: [registry],
    }),
  };
}
