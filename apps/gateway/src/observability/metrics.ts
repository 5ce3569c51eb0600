/**
 * Prometheus metrics. A registry per server instance (not prom-client's global
 * one) so tests can start several gateways in one process.
 */
import { Counter, Gauge, Registry } from "prom-client";
import { collectProcessMetrics, countFromZero, labelValues } from "@tasklane/observability";

/** Every `kind` of tasklane_rate_limited_total: the API token bucket (HTTP and WebSocket operations). */
export const RATE_LIMIT_KINDS = labelValues({ api: true });

/** Every `reason` of tasklane_tenant_operations_refused_total (limits/tenant-concurrency.ts). */
export const TENANT_REFUSAL_REASONS = labelValues({ queue_full: true, wait_timeout: true });

export interface GatewayMetrics {
  readonly registry: Registry;
  /** One increment per root field of each GraphQL operation; `code` is OK or the contract error code. */
  readonly apiRequests: Counter<"operation" | "code">;
  /** Tasks created through the API (submitTask(s), submitWorkflow, replayTask); an idempotent repeat creates none. */
  readonly tasksSubmitted: Counter<string>;
  /** Requests refused by a rate limit; `kind` names the limit (RATE_LIMIT_KINDS; never a tenant id). */
  readonly rateLimited: Counter<"kind">;
  /** Tenants' operations waiting for a slot of their share of this gateway now (all tenants together). */
  readonly tenantOperationsWaiting: Gauge;
  /** Tenants' operations that had to wait for a slot (admitted or not). */
  readonly tenantOperationsQueued: Counter;
  /** Tenants' operations refused RATE_LIMITED by the per-tenant concurrency bound, by `reason` (TENANT_REFUSAL_REASONS). */
  readonly tenantOperationsRefused: Counter<"reason">;
  /** Requests answered OVERLOADED before their body was read: the bound on held request bodies was full. */
  readonly requestBytesRefused: Counter;
  /** WebSockets closed 1013 because too much waited to be sent to them, by the `limit` passed (SLOW_CONSUMER_LIMITS). */
  readonly wsSlowConsumerCloses: Counter<"limit">;
}

/** Every `limit` of tasklane_gateway_ws_slow_consumer_closes_total (realtime/socket-output-limit.ts). */
export const SLOW_CONSUMER_LIMITS = labelValues({ socket: true, tenant: true });

/** Readings taken when /metrics is scraped rather than kept up to date per request. */
export interface GatewayMetricReadings {
  /** Bytes of request bodies held now (limits/request-bytes-budget.ts). */
  requestBytesHeld(): number;
}

export function createMetrics(readings: GatewayMetricReadings = { requestBytesHeld: () => 0 }): GatewayMetrics {
  const registry = new Registry();
  registry.setDefaultLabels({ app: "gateway" });
  collectProcessMetrics(registry);
  const rateLimited = new Counter({
    name: "tasklane_rate_limited_total",
    help: "Requests refused by a rate limit, by kind of limit",
    labelNames: ["kind"] as const,
    registers: [registry],
  });
  countFromZero(rateLimited, "kind", RATE_LIMIT_KINDS);
  const tenantOperationsRefused = new Counter({
    name: "tasklane_tenant_operations_refused_total",
    help: "Operations refused RATE_LIMITED because their tenant already ran its share of this gateway and its queue was full or the wait too long, by reason",
    labelNames: ["reason"] as const,
    registers: [registry],
  });
  countFromZero(tenantOperationsRefused, "reason", TENANT_REFUSAL_REASONS);
  const wsSlowConsumerCloses = new Counter({
    name: "tasklane_gateway_ws_slow_consumer_closes_total",
    help: "WebSockets closed (1013) because more than their limit waited to be sent to them: one socket's 8 MiB or its tenant's 32 MiB together, by limit",
    labelNames: ["limit"] as const,
    registers: [registry],
  });
  countFromZero(wsSlowConsumerCloses, "limit", SLOW_CONSUMER_LIMITS);
  new Gauge({
    name: "tasklane_gateway_held_request_bytes",
    help: "Bytes of request bodies this gateway holds now, against MAX_INFLIGHT_REQUEST_BYTES",
    registers: [registry],
    collect() {
      this.set(readings.requestBytesHeld());
    },
  });
  return {
    registry,
    rateLimited,
    tenantOperationsRefused,
    wsSlowConsumerCloses,
    requestBytesRefused: new Counter({
      name: "tasklane_gateway_request_bytes_refused_total",
      help: "Requests answered 503 OVERLOADED before their body was read, because the bodies held reached MAX_INFLIGHT_REQUEST_BYTES",
      registers: [registry],
    }),
    tenantOperationsWaiting: new Gauge({
      name: "tasklane_tenant_operations_waiting",
      help: "Operations waiting for a slot of their tenant's share of this gateway (TENANT_POOL_SHARE), all tenants together",
      registers: [registry],
    }),
    tenantOperationsQueued: new Counter({
      name: "tasklane_tenant_operations_queued_total",
      help: "Operations that waited for a slot of their tenant's share of this gateway",
      registers: [registry],
    }),
    apiRequests: new Counter({
      name: "tasklane_api_requests_total",
      help: "GraphQL root fields served, by operation (root field) and result code",
      labelNames: ["operation", "code"] as const,
      registers: [registry],
    }),
    tasksSubmitted: new Counter({
      name: "tasklane_tasks_submitted_total",
      help: "Tasks created through submitTask, submitTasks, submitWorkflow and replayTask (idempotent repeats not counted)",
      registers: [registry],
    }),
  };
}
