// `npm run console:create-user -- --tenant <id> --email <e> --password <p>`
// Creates a console user for a tenant through the gateway's operator mutation
// createConsoleUser, with the platform admin token (ADMIN_TOKEN). The gateway
// must be running; TASKLANE_API_URL points at it (default
// http://127.0.0.1:$PORT/graphql, PORT defaulting to 4000). The password may
// come from CONSOLE_USER_PASSWORD instead of --password, keeping it out of
// the process list and shell history. Node built-ins only.
import { parseArgs } from "node:util";

const usage = "usage: npm run console:create-user -- --tenant <tenant id> --email <email> [--password <password>] (or CONSOLE_USER_PASSWORD)";

function fail(message) {
  console.error(`error: ${message}`);
  process.exit(1);
}

let values;
try {
  ({ values } = parseArgs({ options: { tenant: { type: "string" }, email: { type: "string" }, password: { type: "string" } } }));
} catch (error) {
  fail(`${error instanceof Error ? error.message : String(error)}\n${usage}`);
}
const password = values.password ?? process.env.CONSOLE_USER_PASSWORD;
if (!values.tenant || !values.email || !password) fail(usage);
const adminToken = process.env.ADMIN_TOKEN;
if (!adminToken) fail("ADMIN_TOKEN must be set to the platform admin token (npm start prints it when it generates one)");
const url = process.env.TASKLANE_API_URL ?? `http://127.0.0.1:${process.env.PORT || "4000"}/graphql`;

let response;
try {
  response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${adminToken}` },
    body: JSON.stringify({
      query: `mutation ($t: ID!, $e: String!, $p: String!) { createConsoleUser(tenantId: $t, email: $e, password: $p) { id tenantId email } }`,
      variables: { t: values.tenant, e: values.email, p: password },
    }),
  });
} catch (error) {
  fail(`could not reach the gateway at ${url}: ${error instanceof Error ? error.message : String(error)}`);
}
const body = await response.json().catch(() => null);
const created = body?.data?.createConsoleUser;
if (!created) {
  const first = body?.errors?.[0];
  fail(first ? `${first.extensions?.code ?? "ERROR"}: ${first.message}` : `unexpected answer (HTTP ${response.status})`);
}
console.log(`created console user ${created.email} (${created.id}) for tenant ${created.tenantId}`);
