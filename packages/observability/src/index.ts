export * from "./ops-server.js";
export * from "./ops-server-or-exit.js";
export * from "./readiness.js";
export * from "./tracing.js";
export * from "./task-trace.js";
export * from "./process-metrics.js";
export * from "./counters-from-zero.js";
export * from "./process-crash.js";
