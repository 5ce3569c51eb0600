/**
 * The worker's Prometheus metrics, on its own registry. Labels are bounded:
 * `outcome` has seven values; no tenant or queue labels (a fleet serves every
 * tenant, so those would multiply series by customers — docs/operations.md).
 */
import { MAX_TIMEOUT_SECONDS, type FailureDecision } from "@tasklane/core";
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import { collectProcessMetrics, countFromZero, labelValues } from "@tasklane/observability";

/**
 * What an attempt ended as, once recorded. `failed`/`timed_out`: a retry was
 * scheduled; `dead`: the failure ended the task (permanent error or budget
 * spent); `stale`: the outcome was refused because the lease moved on;
 * `cancelled`: the tenant cancelled the task mid-request; `handed_back`: the
 * worker stopped mid-request and returned the task uncharged.
 */
export type AttemptOutcomeLabel = "succeeded" | "failed" | "timed_out" | "dead" | "stale" | "cancelled" | "handed_back";
export const ATTEMPT_OUTCOMES = labelValues<AttemptOutcomeLabel>({
  succeeded: true,
  failed: true,
  timed_out: true,
  dead: true,
  stale: true,
  cancelled: true,
  handed_back: true,
});

export interface WorkerMetrics {
  readonly registry: Registry;
  readonly starts: Counter;
  readonly outcomes: Counter<"outcome">;
  /** Postgres start time minus runAt: how late the fleet picked the task up. */
  readonly startDelay: Histogram;
  /** The PUSH request, from send to the (bounded) body read. */
  readonly execution: Histogram;
  readonly inFlight: Gauge;
  /** Failures this worker turned into a scheduled retry. */
  readonly retries: Counter;
}

/** `heldOutcomes`: outcomes waiting for Postgres to answer again (CompletionBatcher.heldCount), read at each scrape. */
export function createWorkerMetrics(heldOutcomes: () => number = () => 0): WorkerMetrics {
  const registry = new Registry();
  registry.setDefaultLabels({ app: "worker" });
  collectProcessMetrics(registry);
  const outcomes = new Counter({
    name: "tasklane_task_outcomes_total",
    help: "PUSH attempts by recorded outcome (succeeded, failed, timed_out, dead, stale, cancelled, handed_back)",
    labelNames: ["outcome"] as const,
    registers: [registry],
  });
  countFromZero(outcomes, "outcome", ATTEMPT_OUTCOMES);
  new Gauge({
    name: "tasklane_worker_held_outcomes",
    help: "Attempt outcomes this worker holds because Postgres could not be reached, recorded again while their leases last",
    registers: [registry],
    collect() {
      this.set(heldOutcomes());
    },
  });
  return {
    registry,
    outcomes,
    starts: new Counter({ name: "tasklane_task_starts_total", help: "PUSH attempts started by this worker", registers: [registry] }),
    startDelay: new Histogram({
      name: "tasklane_task_start_delay_seconds",
      help: "Actual start minus runAt of each attempt (Postgres clock)",
      // Milliseconds matter here: the promise is "starts within a few ms of runAt". The top buckets keep a
      // backlog's p99 readable (the oldest-queued-age alerts fire at 1 and 10 minutes).
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3_600],
      registers: [registry],
    }),
    execution: new Histogram({
      name: "tasklane_task_execution_seconds",
      help: "Duration of the PUSH request of each attempt",
      // Up to MAX_TIMEOUT_SECONDS (a day): past the last finite bucket histogram_quantile answers that bucket's
      // bound, so a p99 of two-hour requests would read as the bucket below them.
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3_600, 14_400, MAX_TIMEOUT_SECONDS],
      registers: [registry],
    }),
    inFlight: new Gauge({ name: "tasklane_worker_in_flight", help: "PUSH attempts running in this worker now", registers: [registry] }),
    retries: new Counter({ name: "tasklane_retries_total", help: "Failed attempts that were scheduled for a retry", registers: [registry] }),
  };
}

/** The label of a recorded failure: refused (stale), a scheduled retry, or the end of the task. */
export function failureOutcome(decision: FailureDecision, timedOut: boolean, recorded: boolean): AttemptOutcomeLabel {
  if (!recorded) return "stale";
  if (decision.kind === "dead") return "dead";
  return timedOut ? "timed_out" : "failed";
}
