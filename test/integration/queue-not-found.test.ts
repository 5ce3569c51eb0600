/**
 * NOT_FOUND for a queue names the queue the caller asked for, on every
 * operation that takes one, and reads the same when another tenant has a
 * queue of that name.
 */
import { describe, expect, it } from "vitest";
import { useGateway } from "../helpers/gateway-fixture.js";
import { createTenant, gql } from "../helpers/platform.js";

const OPERATIONS: Record<string, string> = {
  submitTask: `mutation ($q: String) { submitTask(input: { type: "x", queue: $q }) { id } }`,
  submitTasks: `mutation ($q: String) { submitTasks(inputs: [{ type: "x" }, { type: "y", queue: $q }]) { id } }`,
  leaseTasks: `mutation ($q: String!) { leaseTasks(queue: $q, workerId: "w") { leaseToken } }`,
  createSchedule: `mutation ($q: String) { createSchedule(input: { name: "s", cron: "0 0 1 1 *", task: { type: "x", queue: $q } }) { id } }`,
  submitWorkflow: `mutation ($q: String) { submitWorkflow(input: { name: "w", tasks: [{ key: "a", type: "x" }, { key: "b", type: "y", queue: $q, dependsOn: ["a"] }] }) { id } }`,
  pauseQueue: `mutation ($q: String!) { pauseQueue(name: $q) { name } }`,
};

describe("a missing queue", () => {
  const platform = useGateway();

  it("is named in the NOT_FOUND message of every operation that takes a queue", async () => {
    const { apiKey } = await createTenant(platform.gateway);
    for (const [op, query] of Object.entries(OPERATIONS)) {
      const res = await gql(platform.gateway.url, query, { q: "reports-eu" }, apiKey);
      expect({ op, error: res.errors?.[0] }, op).toMatchObject({
        op,
        error: { message: 'Queue "reports-eu" not found', extensions: { code: "NOT_FOUND", entity: "Queue", id: "reports-eu" } },
      });
    }
  });

  it("reads the same whether another tenant has a queue of that name or not", async () => {
    const a = await createTenant(platform.gateway);
    const b = await createTenant(platform.gateway);
    const made = await gql(platform.gateway.url, `mutation { upsertQueue(input: { name: "a-only", mode: PULL }) { name } }`, {}, a.apiKey);
    expect(made.errors).toBeUndefined();
    for (const [op, query] of Object.entries(OPERATIONS)) {
      const foreign = await gql(platform.gateway.url, query, { q: "a-only" }, b.apiKey);
      const nowhere = await gql(platform.gateway.url, query, { q: "no-one" }, b.apiKey);
      expect(foreign.errors?.[0]?.message, op).toBe('Queue "a-only" not found');
      expect(JSON.stringify(foreign.errors?.[0]?.extensions).replaceAll("a-only", "<q>"), op).toBe(JSON.stringify(nowhere.errors?.[0]?.extensions).replaceAll("no-one", "<q>"));
    }
  });
});
