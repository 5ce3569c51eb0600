import { buildSchema, execute, parse, type GraphQLResolveInfo } from "graphql";
import { describe, expect, it } from "vitest";
import { selectsField } from "./selection.js";

describe("selectsField", () => {
  const schema = buildSchema(`type Task { id: ID } type Outcome { taskId: ID task: Task } type Query { outcomes: [Outcome] }`);
  /** Runs `query` and reports what selectsField said about `task` while resolving `outcomes`. */
  const asks = async (query: string) => {
    let seen: boolean | undefined;
    const result = await execute({
      schema,
      document: parse(query),
      rootValue: {
        outcomes: (_args: unknown, _ctx: unknown, info: GraphQLResolveInfo) => {
          seen = selectsField(info, "task");
          return [];
        },
      },
    });
    expect(result.errors).toBeUndefined();
    return seen;
  };

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
