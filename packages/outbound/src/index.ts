export * from "./outbound-agent.js";
export * from "./post-text.js";
