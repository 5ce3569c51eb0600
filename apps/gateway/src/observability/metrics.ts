/**
 * Prometheus metrics. A registry per server instance (not prom-client's global
 * one) so tests can start several gateways in one process.
 */
import { Counter, Registry } from "prom-client";
import { collectProcessMetrics, countFromZero, labelValues } from "@tasklane/observability";

/** Every `kind` of tasklane_rate_limited_total: the API token bucket (HTTP and WebSocket operations). */
export const RATE_LIMIT_KINDS = labelValues({ api: true });

export interface GatewayMetrics {
  readonly registry: Registry;
  /** One increment per root field of each GraphQL operation; `code` is OK or the contract error code. */
  readonly apiRequests: Counter<"operation" | "code">;
  /** Tasks created through the API (submitTask(s), submitWorkflow); an idempotent repeat creates none. */
  readonly tasksSubmitted: Counter<string>;
  /** Requests refused by a rate limit; `kind` names the limit (RATE_LIMIT_KINDS; never a tenant id). */
  readonly rateLimited: Counter<"kind">;
}

export function createMetrics(): GatewayMetrics {
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
  return {
    registry,
    rateLimited,
    apiRequests: new Counter({
      name: "tasklane_api_requests_total",
      help: "GraphQL root fields served, by operation (root field) and result code",
      labelNames: ["operation", "code"] as const,
      registers: [registry],
    }),
    tasksSubmitted: new Counter({
      name: "tasklane_tasks_submitted_total",
      help: "Tasks created through submitTask, submitTasks and submitWorkflow (idempotent repeats not counted)",
      registers: [registry],
    }),
  };
}
