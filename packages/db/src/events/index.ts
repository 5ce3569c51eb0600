export * from "./relay-window.js";
export * from "./read-task-events.js";
export * from "./relay-cursor.js";
export * from "./relay-connection.js";
export * from "./task-audit.js";
export * from "./attempt-outcomes.js";
export * from "./replay-events.js";
