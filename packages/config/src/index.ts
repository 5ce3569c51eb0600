export * from "./env.js";
export * from "./redis-url.js";
