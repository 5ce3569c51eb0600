import { ApolloServer, HeaderMap } from "@apollo/server";
import type { GatewayGraphQLRequestContext, GatewayInterface } from "@apollo/server-gateway-interface";
import { buildSchema, printSchema } from "graphql";
import { afterAll, describe, expect, it } from "vitest";

/**
 * The gateway's executor (compiled-execution.ts) receives Apollo's gateway
 * request context, which patches/@apollo+server+*.patch builds with a class
 * instead of an object literal with accessors (the literal kept every
 * request's objects alive into the old generation; test/bench/findings.md).
 */
describe("Apollo's gateway request context (patched)", () => {
  const servers: ApolloServer[] = [];
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
  });

  it("is the patched one, and still reads and writes the answer's status and headers", async () => {
    const schema = buildSchema("type Query { hello: String }");
    const seen: GatewayGraphQLRequestContext[] = [];
    const gateway: GatewayInterface = {
      onSchemaLoadOrUpdate(callback) {
        queueMicrotask(() => callback({ apiSchema: schema, coreSupergraphSdl: printSchema(schema) }));
        return () => undefined;
      },
      async load() {
        return {
          executor: async (requestContext) => {
            seen.push(requestContext);
            requestContext.response?.http?.headers.set("x-executed", String(requestContext.response.http.status ?? "none"));
            if (requestContext.response?.http) requestContext.response.http.status = 299;
            return { data: { hello: "w" } };
          },
        };
      },
      async stop() {},
    };
    const apollo = new ApolloServer({ gateway });
    servers.push(apollo);
    await apollo.start();
    const res = await apollo.executeHTTPGraphQLRequest({
      httpGraphQLRequest: { method: "POST", headers: new HeaderMap([["content-type", "application/json"]]), search: "", body: { query: "{ hello }" } },
      context: async () => ({}),
    });
    expect(res.status).toBe(299);
    expect(res.headers.get("x-executed")).toBe("none");
    expect(JSON.parse(res.body.kind === "complete" ? res.body.string : "{}")).toEqual({ data: { hello: "w" } });
    // An object literal's accessor is an own property; the patch's class keeps it on the prototype.
    const http = seen[0]?.response?.http;
    expect(http).toBeDefined();
    expect(Object.getOwnPropertyDescriptor(http, "status")).toBeUndefined();
  });
});
