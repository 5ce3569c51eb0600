import type { GatewayExecutor, GatewayGraphQLRequestContext } from "@apollo/server-gateway-interface";
import { GraphQLError, GraphQLInt, GraphQLList, GraphQLNonNull, GraphQLObjectType, GraphQLSchema, GraphQLString, execute, getOperationAST, parse } from "graphql";
import { compileQuery } from "graphql-jit";
import { describe, expect, it, vi } from "vitest";
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

async function executorOf(compile = compileQuery): Promise<GatewayExecutor> {
  const gateway = compiledExecutionGateway(schema, compile);
  const loaded: GraphQLSchema[] = [];
  gateway.onSchemaLoadOrUpdate(({ apiSchema }) => loaded.push(apiSchema));
  const { executor } = await gateway.load({ apollo: {} });
  expect(loaded).toEqual([schema]);
  return executor!;
}

/** As Apollo hands a request over: the operation it resolved from the client's name (here: none given). */
function requestFor(query: string, variables: Record<string, unknown>, clientOperationName?: string): GatewayGraphQLRequestContext {
  const document = parse(query);
  const operation = getOperationAST(document, clientOperationName ?? null) ?? undefined;
  return {
    document,
    operation,
    operationName: operation?.name?.value ?? null,
    context: { prefix: "i" },
    request: { variables, operationName: clientOperationName },
  } as unknown as GatewayGraphQLRequestContext;
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

  it("compiles an operation on its second run, once, and runs the first on graphql-js", async () => {
    const compile = vi.fn(compileQuery);
    const executor = await executorOf(compile);
    const request = requestFor("query ($n: Int!) { items(first: $n) { id } }", { n: 2 });
    const answers = [];
    for (let run = 1; run <= 3; run++) {
      answers.push(await executor(request));
      expect(compile, `after run ${run}`).toHaveBeenCalledTimes(run === 1 ? 0 : 1);
    }
    expect(answers).toEqual(Array(3).fill({ data: { items: [{ id: "i0" }, { id: "i1" }] } }));
    // Another document is counted on its own.
    await executor(requestFor("{ items(first: 1) { size } }", {}));
    expect(compile).toHaveBeenCalledTimes(1);
  });

  it("answers refused variables in graphql-js's words, which Apollo turns into BAD_USER_INPUT", async () => {
    const executor = await executorOf();
    const request = requestFor("query ($n: Int!) { items(first: $n) { id } }", { n: "three" });
    await executor(request);
    const result = await executor(request);
    expect(result.data).toBeUndefined();
    const [error] = result.errors!;
    expect(error!.message).toMatch(/^Variable "\$n" got invalid value "three"/);
    expect(error!.nodes?.[0]?.kind).toBe("VariableDefinition");
  });

  it("gives a resolver's error without extensions an extensions object, its path and location", async () => {
    const executor = await executorOf();
    const request = requestFor("{ broken }", {});
    await executor(request);
    const result = await executor(request);
    const [error] = result.errors!;
    expect(error).toBeInstanceOf(GraphQLError);
    expect(error!.extensions).toEqual({});
    expect(error!.path).toEqual(["broken"]);
    expect(error!.locations).toEqual([{ line: 1, column: 3 }]);
    expect(error!.originalError?.message).toBe("disk on fire");
  });

  it("keeps a resolver's error code", async () => {
    const executor = await executorOf();
    const request = requestFor("{ refused }", {});
    await executor(request);
    const result = await executor(request);
    expect(result.errors![0]!.extensions).toEqual({ code: "NOT_FOUND" });
    expect(result.data).toEqual({ refused: null });
  });

  it("refuses an operation name the document does not hold, running nothing", async () => {
    const executor = await executorOf();
    const request = requestFor("query A { refused }", {}, "B");
    for (let i = 0; i < 2; i++) {
      const result = await executor(request);
      expect(result.data).toBeUndefined();
      expect(result.errors!.map((e) => ({ message: e.message, code: e.extensions.code }))).toEqual([{ message: 'Unknown operation named "B".', code: "BAD_USER_INPUT" }]);
    }
  });
});
