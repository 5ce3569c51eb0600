export * from "./workflow-input.js";
export * from "./workflow-graph.js";
export * from "./workflow-spec.js";
