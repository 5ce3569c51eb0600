/** npm run print-schema -w apps/gateway: writes the served SDL to apps/gateway/schema.graphql. */
import { writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { buildGatewaySchema, printGatewaySchema } from "../graphql/schema.js";

// dist/scripts/print-schema.js → apps/gateway/schema.graphql
const target = fileURLToPath(new URL("../../schema.graphql", import.meta.url));
const sdl = printGatewaySchema(await buildGatewaySchema());
await writeFile(target, sdl, "utf8");
process.stdout.write(`wrote ${target}\n`);
