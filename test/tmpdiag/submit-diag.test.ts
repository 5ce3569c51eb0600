import { describe, it } from "vitest";
import { normalizeWorkflowSpec, parseInput, submitWorkflowInputSchema, validateWorkflowGraph } from "@tasklane/core";
import { submitWorkflow, listWorkflowTasks } from "@tasklane/db";
import { createTestDatabase } from "../helpers/test-database.js";
import { seedTenant } from "../helpers/seed.js";
describe("diag", () => {
  it("submit 1000", async () => {
    const tdb = await createTestDatabase("diag");
    const db = tdb.db;
    const { tenantId } = await seedTenant(db);
    for (let round = 0; round < 3; round++) {
      const raw = { name: "c", tasks: Array.from({ length: 1000 }, (_, i) => ({ key: `s${i}`, type: "t", dependsOn: i ? [`s${i - 1}`] : [] })) };
      let t = Date.now();
      const input = parseInput(submitWorkflowInputSchema, raw);
      validateWorkflowGraph(input.tasks);
      const spec = normalizeWorkflowSpec(input, Date.now());
      const tv = Date.now() - t; t = Date.now();
      const r = await submitWorkflow(db, tenantId, spec, { horizonMs: 300000 });
      const ts = Date.now() - t; t = Date.now();
      await listWorkflowTasks(db, tenantId, [r.workflow.id]);
      console.info("validate", tv, "submit(incl. read)", ts, "read", Date.now() - t);
    }
    await tdb.drop();
  }, 120000);
});
