export * from "./env.js";
export * from "./redis-url.js";
export * from "./logger.js";
export * from "./periodic.js";
export * from "./repeat-throttle.js";
export * from "./stop-signals.js";
