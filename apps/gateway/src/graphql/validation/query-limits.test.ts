import { buildSchema, parse, specifiedRules, validate } from "graphql";
import { describe, expect, it } from "vitest";
import { QueryLimitsRule } from "./query-limits.js";

const schema = buildSchema(`type Node { child: Node name: String } type Query { node: Node }`);
const check = (query: string) => validate(schema, parse(query), [...specifiedRules, QueryLimitsRule]).map((e) => e.message);
const nested = (levels: number) => `{ ${"node { ".repeat(1)}${"child { ".repeat(levels - 2)}name${" }".repeat(levels - 1)} }`;

describe("QueryLimitsRule", () => {
  it("allows depth 12 and refuses 13", () => {
    expect(check(nested(12))).toEqual([]);
    expect(check(nested(13))).toEqual([expect.stringContaining("nested 13 levels deep")]);
  });

  it("counts depth through fragments, once per fragment", () => {
    const query = `{ node { ...A } } fragment A on Node { child { ...B } } fragment B on Node { ${"child { ".repeat(10)}name${" }".repeat(10)} }`;
    expect(check(query)).toEqual([expect.stringContaining("nested 13 levels deep")]);
  });

  it("counts aliases with fragments expanded, introspection included", () => {
    const fragment = `fragment F on Node { ${Array.from({ length: 100 }, (_, i) => `n${i}: name`).join(" ")} }`;
    expect(check(`{ a: node { ...F } b: node { ...F } } ${fragment}`)).toEqual([expect.stringContaining("202 aliases")]);
    expect(check(`{ ${Array.from({ length: 201 }, (_, i) => `t${i}: __typename`).join(" ")} }`)).toEqual([expect.stringContaining("201 aliases")]);
  });

  it("does not count introspection for depth", () => {
    const deepIntrospection = `{ __schema { types { fields { type { ${"ofType { ".repeat(12)}name${" }".repeat(12)} } } } } }`;
    expect(check(deepIntrospection)).toEqual([]);
  });

  it("survives fragment cycles (graphql's own rule reports them)", () => {
    const messages = check(`{ node { ...A } } fragment A on Node { child { ...B } } fragment B on Node { child { ...A } }`);
    expect(messages.some((m) => m.includes("Cannot spread fragment"))).toBe(true);
  });
});
