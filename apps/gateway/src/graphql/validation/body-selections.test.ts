import { buildSchema, getOperationAST, parse } from "graphql";
import { describe, expect, it } from "vitest";
import { MAX_BODY_SELECTIONS, bodySelections } from "./body-selections.js";

const schema = buildSchema(`
  type Task { id: ID payload: String result: String }
  type TaskConnection { nodes: [Task!]! }
  type TaskEvent { task: Task! }
  type Workflow { tasks: [WorkflowTask!]! }
  type WorkflowTask { key: String task: Task! }
  type Query { tasks(first: Int): TaskConnection! task(id: ID!): Task workflow(id: ID!): Workflow }
  type Subscription { taskUpdated: TaskEvent! }
`);

function bodies(query: string) {
  const document = parse(query);
  const operation = getOperationAST(document);
  if (!operation) throw new Error("no operation");
  return bodySelections(schema, document, operation);
}

describe("bodySelections", () => {
  it("counts each payload and result selection, fragments expanded, nested tasks included", () => {
    expect(bodies(`{ tasks { nodes { id payload result } } }`)).toEqual({ count: 2, repeated: null });
    expect(bodies(`{ workflow(id: "w") { tasks { task { ...B } } } a: task(id: "1") { ...B } } fragment B on Task { payload result }`)).toEqual({ count: 4, repeated: null });
    expect(bodies(`subscription { taskUpdated { task { payload } } }`)).toEqual({ count: 1, repeated: null });
    expect(bodies(`{ tasks { nodes { id } } }`)).toEqual({ count: 0, repeated: null });
  });

  it("finds a body field asked for under two names in one selection set, also across fragments", () => {
    expect(bodies(`{ tasks { nodes { a: payload b: payload } } }`).repeated).toBe("payload");
    expect(bodies(`{ task(id: "1") { ...A ...B } } fragment A on Task { x: result } fragment B on Task { y: result }`).repeated).toBe("result");
    expect(bodies(`{ task(id: "1") { ... on Task { payload } payload } }`).repeated).toBeNull();
    // One name per task: two tasks each with their payload are fine.
    expect(bodies(`{ a: task(id: "1") { p: payload } b: task(id: "2") { p: payload } }`).repeated).toBeNull();
  });

  it("counts aliased single-task reads past the limit", () => {
    const reads = (n: number) => `{ ${Array.from({ length: n }, (_, i) => `t${i}: task(id: "${i}") { payload result }`).join(" ")} }`;
    expect(bodies(reads(MAX_BODY_SELECTIONS / 2)).count).toBe(MAX_BODY_SELECTIONS);
    expect(bodies(reads(200)).count).toBe(400);
  });
});
