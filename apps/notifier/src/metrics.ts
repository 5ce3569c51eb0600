import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { DeliveryOutcome } from "@tasklane/db";
import { collectProcessMetrics, countFromZero, labelValues } from "@tasklane/observability";

/** Every `outcome` of tasklane_notifier_deliveries_total: the recorded outcomes, plus stale (claim lost) and unrecorded (database error). */
export const DELIVERY_OUTCOMES = labelValues<DeliveryOutcome["kind"] | "stale" | "unrecorded">({
  delivered: true,
  retry: true,
  exhausted: true,
  gone: true,
  abandoned: true,
  stale: true,
  unrecorded: true,
});

export interface NotifierMetrics {
  registry: Registry;
  /** Recorded outcomes: delivered, retry, exhausted, gone, abandoned; stale = claim lost; unrecorded = database error. */
  deliveries: Counter<"outcome">;
  /** NOTIFY outbox rows fanned out. */
  events: Counter;
  /** webhook_deliveries rows created by fan-out. */
  deliveriesCreated: Counter;
  /** Time of one POST, from send to the (capped) body read. */
  requestSeconds: Histogram;
}

/** A registry of our own, so tests and multiple instances in one process never collide on the global one. */
export function createMetrics(inFlight: () => number): NotifierMetrics {
  const registry = new Registry();
  registry.setDefaultLabels({ app: "notifier" });
  collectProcessMetrics(registry);
  new Gauge({
    name: "tasklane_notifier_deliveries_in_flight",
    help: "Deliveries being sent right now by this notifier",
    registers: [registry],
    collect() {
      this.set(inFlight());
    },
  });
  const deliveries = new Counter({
    name: "tasklane_notifier_deliveries_total",
    help: "Webhook and callback delivery attempts by recorded outcome",
    labelNames: ["outcome"] as const,
    registers: [registry],
  });
  countFromZero(deliveries, "outcome", DELIVERY_OUTCOMES);
  return {
    registry,
    deliveries,
    events: new Counter({ name: "tasklane_notifier_events_total", help: "Terminal task events fanned out", registers: [registry] }),
    deliveriesCreated: new Counter({
      name: "tasklane_notifier_deliveries_created_total",
      help: "Deliveries created by fan-out (one per matching webhook, plus callbacks)",
      registers: [registry],
    }),
    requestSeconds: new Histogram({
      name: "tasklane_notifier_request_duration_seconds",
      help: "Duration of one delivery POST",
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
  };
}
