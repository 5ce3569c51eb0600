export * from "./common.js";
export * from "./pagination.js";
export * from "./parse.js";
export * from "./queue.js";
export * from "./task-spec.js";
export * from "./task.js";
export * from "./tenant.js";
export * from "./schedule.js";
