/**
 * The gateway as a real child process (for tests that run several instances
 * or point it at a Redis Cluster), and the operator call every such test
 * starts with.
 */
import { startApp, waitFor, type AppProcess } from "./app-process.js";
import { freePort } from "./free-port.js";
import { gql } from "./platform.js";

export interface GatewayProcess {
  app: AppProcess;
  /** http://127.0.0.1:port/graphql */
  url: string;
}

/** Starts `apps/gateway/dist/main.js` on a free port and resolves once its /healthz answers 200. */
export async function startGatewayProcess(env: Record<string, string>, adminToken?: string): Promise<GatewayProcess> {
  const port = await freePort();
  const app = startApp("gateway", { ...env, PORT: String(port), HOST: "127.0.0.1", ...(adminToken === undefined ? {} : { ADMIN_TOKEN: adminToken }) });
  const base = `http://127.0.0.1:${port}`;
  await waitFor(
    `gateway on ${port}`,
    async () => {
      if (app.child.exitCode !== null) throw new Error(`gateway exited: ${app.output().slice(-2000)}`);
      return (await fetch(`${base}/healthz`)).status === 200;
    },
    60_000,
    100,
  );
  return { app, url: `${base}/graphql` };
}

export interface ProcessTenant {
  tenantId: string;
  apiKey: string;
}

/** createTenant with the operator token. */
export async function createTenantVia(graphqlUrl: string, adminToken: string, name: string): Promise<ProcessTenant> {
  const res = await gql<{ createTenant: { tenant: { id: string }; apiKey: string } }>(
    graphqlUrl,
    `mutation ($i: CreateTenantInput!) { createTenant(input: $i) { tenant { id } apiKey } }`,
    { i: { name } },
    adminToken,
  );
  const created = res.data?.createTenant;
  if (!created) throw new Error(`createTenant failed: ${JSON.stringify(res.errors)}`);
  return { tenantId: created.tenant.id, apiKey: created.apiKey };
}
