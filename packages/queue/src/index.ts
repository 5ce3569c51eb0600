export * from "./naming.js";
export * from "./connection.js";
export * from "./task-job.js";
export * from "./task-dispatcher.js";
export * from "./dispatch-after-commit.js";
export * from "./cancel-signal.js";
