import { collectDefaultMetrics, type Registry } from "prom-client";

/**
 * How often the event-loop lag histogram samples, in ms. prom-client's
 * default (10) wakes the process 100 times a second: ~0.5% of a core for an
 * otherwise idle process on a 2-vCPU VM, ~2% for the platform's four. A loop
 * blocked for this long or longer is still caught by the sample due during it.
 */
export const EVENT_LOOP_SAMPLE_MS = 50;

/** Node's process metrics (CPU, memory, GC, event-loop lag, handles) on `registry`. */
export function collectProcessMetrics(registry: Registry): void {
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
}
