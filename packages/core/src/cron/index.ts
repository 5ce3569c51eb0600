export * from "./cron-expression.js";
export * from "./misfire.js";
export * from "./occurrence-key.js";
export * from "./overlap.js";
export * from "./canonical-timezone.js";
