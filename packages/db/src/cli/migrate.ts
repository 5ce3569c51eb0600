/** Creates the database if absent and applies pending migrations (npm run migrate). */
import { loadEnv, baseEnvSchema } from "@tasklane/config";
import { prepareDatabase } from "../migrations/apply-migrations.js";

const env = loadEnv(baseEnvSchema);
const applied = await prepareDatabase(env.DATABASE_URL);
console.log(applied.length ? `applied ${applied.map((m) => m.name).join(", ")}` : "database is up to date");
