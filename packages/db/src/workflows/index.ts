export * from "./workflow-record.js";
export * from "./submit-workflow.js";
export * from "./read-workflows.js";
export * from "./cancel-workflow.js";
