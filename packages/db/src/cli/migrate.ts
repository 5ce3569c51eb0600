/** Creates the database if absent and applies pending migrations (npm run migrate). */
import { baseEnvSchema, loadEnvOrExit } from "@tasklane/config";
import { prepareDatabaseOrExit } from "../migrations/apply-migrations.js";

const PROGRAM = "tasklane-migrate";
const env = loadEnvOrExit(baseEnvSchema, PROGRAM);
const applied = await prepareDatabaseOrExit(env.DATABASE_URL, PROGRAM);
console.log(applied.length ? `applied ${applied.map((m) => m.name).join(", ")}` : "database is up to date");
