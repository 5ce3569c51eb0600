import type { TaskConnection } from "@tasklane/sdk";
import { describe, expect, it } from "vitest";
import { readPages } from "./paging.js";

const node = (id: string) => ({ id }) as TaskConnection["nodes"][number];
const page = (ids: string[], endCursor: string | null, hasNextPage = true): TaskConnection => ({ nodes: ids.map(node), pageInfo: { hasNextPage, endCursor }, totalCount: 99 });

describe("readPages", () => {
  it("walks the cursor to --limit, asking for no more than is left", async () => {
    const asked: { first: number; after: string | null }[] = [];
    const pages = [page(["a", "b"], "c1"), page(["c", "d"], "c2"), page(["e"], "c3")];
    const { nodes, totalCount } = await readPages(async (p) => (asked.push(p), pages.shift()!), 5);
    expect(nodes.map((n) => n.id)).toEqual(["a", "b", "c", "d", "e"]);
    expect(totalCount).toBe(99);
    expect(asked).toEqual([
      { first: 5, after: null },
      { first: 3, after: "c1" },
      { first: 1, after: "c2" },
    ]);
  });

  it("ends when a page says hasNextPage but brings nothing or leaves the cursor where it was", async () => {
    let calls = 0;
    const stuck = await readPages(async () => (++calls, page(["a"], "same")), 50);
    expect(stuck.nodes).toHaveLength(2);
    expect(calls).toBe(2);

    calls = 0;
    const empty = await readPages(async () => (++calls, calls === 1 ? page(["a"], "c1") : page([], `c${calls}`)), 50);
    expect(empty.nodes).toHaveLength(1);
    expect(calls).toBe(2);
  });
});
