import { Counter, Gauge, type Registry } from "prom-client";

export interface RelayMetrics {
  /** Task events published to Redis by this process. */
  relayed: Counter;
  /** 1 while this process holds the relay lock. */
  active: Gauge;
  /** Age of the newest event published, at the time it was published. */
  lagSeconds: Gauge;
  /** Tenants with live subscribers, whose events the relay publishes. */
  listeningTenants: Gauge;
}

export function createRelayMetrics(registry: Registry): RelayMetrics {
  return {
    relayed: new Counter({ name: "tasklane_notifier_events_relayed_total", help: "Task events published to Redis pub/sub", registers: [registry] }),
    active: new Gauge({ name: "tasklane_notifier_relay_active", help: "1 while this notifier is the active event relay", registers: [registry] }),
    lagSeconds: new Gauge({
      name: "tasklane_notifier_relay_lag_seconds",
      help: "Age of the newest relayed task event when it was published",
      registers: [registry],
    }),
    listeningTenants: new Gauge({
      name: "tasklane_notifier_relay_listening_tenants",
      help: "Tenants with live task-event subscribers, the only ones whose events are published",
      registers: [registry],
    }),
  };
}
