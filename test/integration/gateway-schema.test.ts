/**
 * The served schema against the contract and against the committed SDL.
 * Fails when apps/gateway/schema.graphql is stale (run `npm run print-schema
 * -w apps/gateway`) or when the served schema breaks the public contract.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { buildGatewaySchema, printGatewaySchema } from "@tasklane/gateway/graphql/schema";
import { buildSchema, findBreakingChanges, isObjectType, type GraphQLSchema } from "graphql";
import { beforeAll, describe, expect, it } from "vitest";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const contractPath = path.resolve(root, "../shared/contract/schema.graphql");
const committedPath = path.resolve(root, "apps/gateway/schema.graphql");

describe("gateway schema", () => {
  let served: GraphQLSchema;
  beforeAll(async () => {
    served = await buildGatewaySchema();
  });

  it("matches the committed SDL (npm run print-schema -w apps/gateway)", async () => {
    const committed = await readFile(committedPath, "utf8");
    expect(printGatewaySchema(served)).toBe(committed);
  });

  it("has no breaking change from the contract", async () => {
    const contract = buildSchema(await readFile(contractPath, "utf8"));
    const breaking = findBreakingChanges(contract, served).map((c) => `${c.type}: ${c.description}`);
    expect(breaking).toEqual([]);
  });

  it("declares every contract operation", async () => {
    const contract = buildSchema(await readFile(contractPath, "utf8"));
    for (const root of ["getQueryType", "getMutationType", "getSubscriptionType"] as const) {
      const expected = Object.keys(contract[root]()?.getFields() ?? {});
      const actual = Object.keys(served[root]()?.getFields() ?? {});
      expect(actual).toEqual(expect.arrayContaining(expected));
    }
  });

  it("reads plain fields as properties: only field resolvers run code per field", () => {
    // type-graphql otherwise wraps every field in a resolver of its own, which ran for each
    // of the ~2,400 fields of a 100-task lease answer and kept graphql-jit from inlining them.
    const roots = new Set([served.getQueryType(), served.getMutationType(), served.getSubscriptionType()]);
    const resolved: string[] = [];
    for (const type of Object.values(served.getTypeMap())) {
      if (!isObjectType(type) || type.name.startsWith("__") || roots.has(type)) continue;
      for (const field of Object.values(type.getFields())) if (field.resolve) resolved.push(`${type.name}.${field.name}`);
    }
    expect(resolved.sort()).toEqual(["Queue.stats", "Schedule.runs", "Task.attemptHistory", "Task.events", "Task.replayOf", "Tenant.usage", "Workflow.taskCount", "Workflow.tasks"]);
  });
});
