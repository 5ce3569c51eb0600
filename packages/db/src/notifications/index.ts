export * from "./task-event-json.js";
export * from "./plan-deliveries.js";
export * from "./fan-out.js";
export * from "./claim-deliveries.js";
export * from "./record-delivery-outcome.js";
export * from "./plan-workflow-deliveries.js";
export * from "./listen-wakeups.js";
export * from "./redeliver-deliveries.js";
