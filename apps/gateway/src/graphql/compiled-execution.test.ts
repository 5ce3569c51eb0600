import type { GatewayExecutor, GatewayGraphQLRequestContext } from "@apollo/server-gateway-interface";
import { GraphQLError, GraphQLInt, GraphQLList, GraphQLNonNull, GraphQLObjectType, GraphQLSchema, GraphQLString, execute, parse } from "graphql";
import { describe, expect, it } from "vitest";
import { compiledExecutionGateway } from "./compiled-execution.js";

const Item = new GraphQLObjectType({
  name: "Item",
  fields: {
    id: { type: new GraphQLNonNull(GraphQLString) },
    size: { type: GraphQLInt },
  },
});
const schema = new GraphQLSchema({
  query: new GraphQLObjectType({
    name: "Query",
    fields: {
      items: {
        type: new GraphQLList(Item),
        args: { first: { type: new GraphQLNonNull(GraphQLInt) } },
        resolve: (_root, args: { first: number }, ctx: { prefix: string }) =>
          Array.from({ length: args.first }, (_, i) => ({ id: `${ctx.prefix}${i}`, size: i * 10 })),
      },
      broken: {
        type: GraphQLString,
        resolve: () => {
          throw new Error("disk on fire");
        },
      },
      refused: {
        type: GraphQLString,
        resolve: () => {
          throw new GraphQLError("no such queue", { extensions: { code: "NOT_FOUND" } });
        },
      },
    },
  }),
});

async function executorOf(): Promise<GatewayExecutor> {
  const gateway = compiledExecutionGateway(schema);
  const loaded: GraphQLSchema[] = [];
  gateway.onSchemaLoadOrUpdate(({ apiSchema }) => loaded.push(apiSchema));
  const { executor } = await gateway.load({ apollo: {} });
  expect(loaded).toEqual([schema]);
  return executor!;
}

function requestFor(query: string, variables: Record<string, unknown>): GatewayGraphQLRequestContext {
  return { document: parse(query), operationName: null, context: { prefix: "i" }, request: { variables } } as unknown as GatewayGraphQLRequestContext;
}

describe("compiledExecutionGateway", () => {
  it("answers what graphql-js answers, for the same document run again", async () => {
    const executor = await executorOf();
    const request = requestFor("query ($n: Int!) { items(first: $n) { id size } }", { n: 3 });
    const expected = await execute({ schema, document: request.document, contextValue: { prefix: "i" }, variableValues: { n: 3 } });
    expect(await executor(request)).toEqual(expected);
    expect(await executor(request)).toEqual(expected);
    expect(expected.data).toEqual({ items: [{ id: "i0", size: 0 }, { id: "i1", size: 10 }, { id: "i2", size: 20 }] });
  });

  it("answers refused variables in graphql-js's words, which Apollo turns into BAD_USER_INPUT", async () => {
    const executor = await executorOf();
    const result = await executor(requestFor("query ($n: Int!) { items(first: $n) { id } }", { n: "three" }));
    expect(result.data).toBeUndefined();
    const [error] = result.errors!;
    expect(error!.message).toMatch(/^Variable "\$n" got invalid value "three"/);
    expect(error!.nodes?.[0]?.kind).toBe("VariableDefinition");
  });

  it("gives a resolver's error without extensions an extensions object, its path and location", async () => {
    const executor = await executorOf();
    const result = await executor(requestFor("{ broken }", {}));
    const [error] = result.errors!;
    expect(error).toBeInstanceOf(GraphQLError);
    expect(error!.extensions).toEqual({});
    expect(error!.path).toEqual(["broken"]);
    expect(error!.locations).toEqual([{ line: 1, column: 3 }]);
    expect(error!.originalError?.message).toBe("disk on fire");
  });

  it("keeps a resolver's error code", async () => {
    const executor = await executorOf();
    const result = await executor(requestFor("{ refused }", {}));
    expect(result.errors![0]!.extensions).toEqual({ code: "NOT_FOUND" });
    expect(result.data).toEqual({ refused: null });
  });
});
