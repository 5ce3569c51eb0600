import { describe, it } from "vitest";
import { useGateway } from "../helpers/gateway-fixture.js";
import { createTenant, gql } from "../helpers/platform.js";
const platform = useGateway();
describe("diag", () => {
  it("gql submit 1000", async () => {
    const tenant = await createTenant(platform.gateway);
    for (const sel of ["id", "id tasks { key dependsOn task { id status result attempts workflowId queue cancelRequested } }", "id"]) {
      const tasks = Array.from({ length: 1000 }, (_, i) => ({ key: `s${i}`, type: "t", dependsOn: i ? [`s${i - 1}`] : [] }));
      const t = Date.now();
      const res = await gql(platform.gateway.url, `mutation ($i: SubmitWorkflowInput!) { submitWorkflow(input: $i) { ${sel} } }`, { i: { name: "x", tasks } }, tenant.apiKey);
      console.info(sel.slice(0, 10), Date.now() - t, JSON.stringify(res.errors ?? null).slice(0, 200));
    }
  }, 120000);
});
