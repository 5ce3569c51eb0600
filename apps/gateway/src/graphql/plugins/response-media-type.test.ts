import { ApolloServer, HeaderMap, type ApolloServerPlugin } from "@apollo/server";
import { afterAll, describe, expect, it } from "vitest";
import { responseMediaType } from "./response-media-type.js";

const typeDefs = "type Query { hello: String }";
const resolvers = { Query: { hello: () => "world" } };

async function server(plugins: ApolloServerPlugin[]): Promise<ApolloServer> {
  const apollo = new ApolloServer({ typeDefs, resolvers, plugins, allowBatchedHttpRequests: true });
  await apollo.start();
  return apollo;
}

/** Status and content type of one POST with `accept` (absent when undefined). */
async function answer(apollo: ApolloServer, accept: string | undefined, body: unknown): Promise<{ status: number | undefined; type: string | undefined }> {
  const headers = new HeaderMap([["content-type", "application/json"]]);
  if (accept !== undefined) headers.set("accept", accept);
  const res = await apollo.executeHTTPGraphQLRequest({ httpGraphQLRequest: { method: "POST", headers, search: "", body }, context: async () => ({}) });
  return { status: res.status, type: res.headers.get("content-type") };
}

describe("responseMediaType", () => {
  const servers: ApolloServer[] = [];
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
  });

  it("answers every Accept header, first seen or kept, with the type and status Apollo chooses itself", async () => {
    const apollo = await server([]);
    const ours = await server([responseMediaType() as ApolloServerPlugin]);
    servers.push(apollo, ours);
    const accepts = [
      undefined,
      "application/graphql-response+json, application/json",
      "application/json",
      "application/json;q=0.5, application/graphql-response+json",
      "application/graphql-response+json;q=0.1, application/json;q=0.9",
      "*/*",
      "application/*",
      "text/html",
      "application/json; callbackSpec=1.0",
      "multipart/mixed",
      "",
    ];
    const bodies = [{ query: "{ hello }" }, { query: "{ nope }" }, [{ query: "{ hello }" }, { query: "{ hello }" }]];
    const chosen = new Set<string | undefined>();
    for (let pass = 0; pass < 2; pass++) {
      for (const accept of accepts) {
        for (const body of bodies) {
          const theirs = await answer(apollo, accept, body);
          expect(await answer(ours, accept, body), `${accept} ${JSON.stringify(body)}`).toEqual(theirs);
          chosen.add(`${theirs.status ?? 200} ${theirs.type}`);
        }
      }
    }
    // The cases tell the types apart: both JSON types and Apollo's 406 are among them.
    expect([...chosen]).toEqual(
      expect.arrayContaining(["200 application/json; charset=utf-8", "200 application/graphql-response+json; charset=utf-8", "406 application/json; charset=utf-8"]),
    );
  });
});
