export * from "./outbound-agent.js";
export * from "./read-body.js";
