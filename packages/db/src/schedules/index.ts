export * from "./schedule-record.js";
export * from "./schedule-store.js";
export * from "./fire-schedules.js";
export * from "./trigger-schedule.js";
export * from "./materialise-occurrences.js";
export * from "./list-schedule-runs.js";
