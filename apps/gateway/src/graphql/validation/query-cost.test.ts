import { buildSchema, getOperationAST, parse } from "graphql";
import { describe, expect, it } from "vitest";
import { MAX_QUERY_COST, UNPAGED_LIST_SIZE, operationCost } from "./query-cost.js";

const schema = buildSchema(`
  type Attempt { number: Int error: String }
  type Task { id: ID status: String attemptHistory: [Attempt!]! }
  type PageInfo { hasNextPage: Boolean }
  type TaskConnection { nodes: [Task!]! pageInfo: PageInfo totalCount: Int }
  type Schedule { id: ID runs(first: Int): [Task!]! }
  type Query {
    tasks(first: Int, after: String): TaskConnection!
    schedules: [Schedule!]!
    task(id: ID!): Task
    tags: [String!]!
  }
`);

function cost(query: string, variables?: Record<string, unknown>) {
  const document = parse(query);
  const operation = getOperationAST(document);
  if (!operation) throw new Error("no operation");
  return operationCost(schema, document, operation, variables);
}

describe("operationCost", () => {
  it("counts one per field, scalar lists included", () => {
    expect(cost(`{ task(id: "x") { id status } tags }`).cost).toBe(4);
  });

  it("multiplies a connection by first, without multiplying its nodes again", () => {
    // tasks(1) + 10 × (nodes(1) + id(1) + status(1) + totalCount(1))
    expect(cost(`{ tasks(first: 10) { nodes { id status } totalCount } }`).cost).toBe(1 + 10 * 4);
    // Omitted first counts as the default page (50).
    expect(cost(`{ tasks { totalCount } }`).cost).toBe(1 + 50 * 1);
  });

  it("takes first from variables, or from the variable's default", () => {
    expect(cost(`query ($n: Int) { tasks(first: $n) { totalCount } }`, { n: 7 }).cost).toBe(8);
    expect(cost(`query ($n: Int = 3) { tasks(first: $n) { totalCount } }`).cost).toBe(4);
  });

  it("multiplies unpaged lists by the assumed size, nested lists compound", () => {
    const attempts = 1 + UNPAGED_LIST_SIZE * 1;
    expect(cost(`{ task(id: "x") { attemptHistory { number } } }`).cost).toBe(1 + attempts);
    // schedules(1) + 20 × (runs(1) + 500 × (id(1) + attemptHistory(21)))
    const nested = cost(`{ schedules { runs(first: 500) { id attemptHistory { number } } } }`).cost;
    expect(nested).toBe(1 + UNPAGED_LIST_SIZE * (1 + 500 * (1 + attempts)));
    expect(nested).toBeGreaterThan(MAX_QUERY_COST);
  });

  it("lets a full page with attempt history through, and refuses many aliased pages", () => {
    const page = `tasks(first: 500) { nodes { id status attemptHistory { number error } } pageInfo { hasNextPage } totalCount }`;
    expect(cost(`{ ${page} }`).cost).toBeLessThanOrEqual(MAX_QUERY_COST);
    expect(cost(`{ ${Array.from({ length: 10 }, (_, i) => `p${i}: ${page}`).join(" ")} }`).cost).toBeGreaterThan(MAX_QUERY_COST);
  });

  it("expands fragments, inline or named, and survives cycles", () => {
    const direct = cost(`{ tasks(first: 5) { nodes { id status } } }`).cost;
    expect(cost(`{ tasks(first: 5) { ...C } } fragment C on TaskConnection { nodes { ...T } } fragment T on Task { id status }`).cost).toBe(direct);
    expect(cost(`{ tasks(first: 5) { ... on TaskConnection { nodes { id ... on Task { status } } } } }`).cost).toBe(direct);
    expect(cost(`{ task(id: "x") { ...A } } fragment A on Task { ...B } fragment B on Task { ...A }`).cost).toBe(1);
  });

  it("reports a page above MAX_PAGE_SIZE wherever it is", () => {
    expect(cost(`{ tasks(first: 501) { totalCount } }`).oversizedPage).toEqual({ field: "tasks", first: 501 });
    expect(cost(`query ($n: Int) { schedules { runs(first: $n) { id } } }`, { n: 10_000 }).oversizedPage).toEqual({ field: "runs", first: 10_000 });
    expect(cost(`{ tasks(first: 500) { totalCount } }`).oversizedPage).toBeNull();
  });

  it("does not charge introspection", () => {
    expect(cost(`{ __schema { types { name fields { name } } } }`).cost).toBe(0);
  });
});
