import type { IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import { takesGraphqlPost } from "./graphql-endpoint.js";

const request = (method: string, url: string, headers: Record<string, string>): IncomingMessage =>
  ({ method, url, headers }) as unknown as IncomingMessage;

describe("takesGraphqlPost", () => {
  it("takes a plain JSON POST to /graphql, with or without a query string or a UTF-8 charset", () => {
    for (const [url, type] of [
      ["/graphql", "application/json"],
      ["/graphql?op=lease", "application/json"],
      ["/graphql", "application/json; charset=utf-8"],
      ["/graphql", "Application/JSON;charset=\"UTF-8\""],
    ] as const) {
      expect(takesGraphqlPost(request("POST", url, { "content-type": type })), `${url} ${type}`).toBe(true);
    }
    expect(takesGraphqlPost(request("POST", "/graphql", { "content-type": "application/json", "content-encoding": "identity" }))).toBe(true);
  });

  it("leaves everything else to Express", () => {
    const cases: Array<[string, string, Record<string, string>]> = [
      ["GET", "/graphql?query=%7B__typename%7D", {}],
      ["POST", "/graphql", {}],
      ["POST", "/graphql", { "content-type": "text/plain" }],
      ["POST", "/graphql", { "content-type": "application/graphql-response+json" }],
      ["POST", "/graphql", { "content-type": "application/json; charset=latin1" }],
      ["POST", "/graphql", { "content-type": "application/json; profile=x" }],
      ["POST", "/graphql", { "content-type": "application/json", "content-encoding": "gzip" }],
      ["POST", "/graphql/x", { "content-type": "application/json" }],
      ["POST", "/healthz", { "content-type": "application/json" }],
    ];
    for (const [method, url, headers] of cases) expect(takesGraphqlPost(request(method, url, headers)), `${method} ${url} ${JSON.stringify(headers)}`).toBe(false);
  });
});
