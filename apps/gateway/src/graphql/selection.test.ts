import { buildSchema, execute, parse, type GraphQLResolveInfo, type GraphQLSchema } from "graphql";
import { describe, expect, it } from "vitest";
import { selectsField, selectsOnly } from "./selection.js";

/** Runs `query` and reports what `look` said about the selection while the root field `field` resolved. */
async function whileResolving<T>(schema: GraphQLSchema, field: string, query: string, look: (info: GraphQLResolveInfo) => T): Promise<T | undefined> {
  let seen: T | undefined;
  const result = await execute({
    schema,
    document: parse(query),
    rootValue: {
      [field]: (_args: unknown, _ctx: unknown, info: GraphQLResolveInfo) => {
        seen = look(info);
        return [];
      },
    },
  });
  expect(result.errors).toBeUndefined();
  return seen;
}

describe("selectsField", () => {
  const schema = buildSchema(`type Task { id: ID } type Outcome { taskId: ID task: Task } type Query { outcomes: [Outcome] }`);
  const asks = (query: string) => whileResolving(schema, "outcomes", query, (info) => selectsField(info, "task"));

  it("sees the child field asked for directly, in an inline fragment or in a named fragment", async () => {
    expect(await asks("{ outcomes { taskId task { id } } }")).toBe(true);
    expect(await asks("{ outcomes { taskId ... on Outcome { task { id } } } }")).toBe(true);
    expect(await asks("query { outcomes { ...O } } fragment O on Outcome { taskId task { id } }")).toBe(true);
  });

  it("is false when only other fields are asked for, an alias included", async () => {
    expect(await asks("{ outcomes { taskId } }")).toBe(false);
    expect(await asks("query { outcomes { ...O } } fragment O on Outcome { taskId }")).toBe(false);
    expect(await asks("{ outcomes { task: taskId } }")).toBe(false);
  });
});

describe("selectsOnly", () => {
  const schema = buildSchema(`type Task { id: ID status: String } type Query { tasks: [Task] }`);
  const ID_ONLY = new Set(["id", "__typename"]);
  const idOnly = (query: string) => whileResolving(schema, "tasks", query, (info) => selectsOnly(info, ID_ONLY));

  it("is true when only the named fields are asked for, directly, aliased or through fragments", async () => {
    expect(await idOnly("{ tasks { id } }")).toBe(true);
    expect(await idOnly("{ tasks { key: id __typename } }")).toBe(true);
    expect(await idOnly("query { tasks { ...T ... on Task { id } } } fragment T on Task { id }")).toBe(true);
  });

  it("is false as soon as any other field is asked for, wherever it hides", async () => {
    expect(await idOnly("{ tasks { id status } }")).toBe(false);
    expect(await idOnly("{ tasks { id ... on Task { status } } }")).toBe(false);
    expect(await idOnly("query { tasks { id ...T } } fragment T on Task { id ...S } fragment S on Task { status }")).toBe(false);
    // The same field asked for twice is resolved once, with both selections.
    expect(await idOnly("{ tasks { id } tasks { status } }")).toBe(false);
  });
});
