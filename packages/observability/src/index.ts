export * from "./ops-server.js";
export * from "./readiness.js";
