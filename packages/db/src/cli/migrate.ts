/** Creates the database if absent and applies pending migrations (npm run migrate). */
import { baseEnvSchema, errorChain, exitWithMessage, loadEnvOrExit } from "@tasklane/config";
import { prepareDatabase } from "../migrations/apply-migrations.js";

const PROGRAM = "tasklane-migrate";
const env = loadEnvOrExit(baseEnvSchema, PROGRAM);

/** host:port/database of DATABASE_URL, without its credentials. */
const target = (() => {
  const url = new URL(env.DATABASE_URL);
  return `${url.hostname || "localhost"}:${url.port || "5432"}${url.pathname}`;
})();

try {
  const applied = await prepareDatabase(env.DATABASE_URL);
  console.log(applied.length ? `applied ${applied.map((m) => m.name).join(", ")}` : "database is up to date");
} catch (error: unknown) {
  // One line an operator can act on (an unreachable server, a failed migration and its reason), not a stack.
  exitWithMessage(PROGRAM, `could not migrate ${target} (DATABASE_URL): ${errorChain(error)}`);
}
