export * from "./database.js";
export * from "./migrations/apply-migrations.js";
export * from "./migrations/ensure-database.js";
export * from "./generated/prisma/client.js";
