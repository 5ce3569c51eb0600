/**
 * Up to `limit` items of a paged list (tasks, dead letters), asking for at
 * most one API page (500) a call, and the total the first page reports.
 */
import { MAX_PAGE_SIZE } from "@tasklane/core/limits";
import type { TaskConnection } from "@tasklane/sdk";

export type PageReader = (page: { first: number; after: string | null }) => Promise<TaskConnection>;

export async function readPages(read: PageReader, limit: number): Promise<Pick<TaskConnection, "nodes" | "totalCount">> {
  const nodes: TaskConnection["nodes"] = [];
  let totalCount = 0;
  let after: string | null = null;
  for (let first = true; nodes.length < limit; first = false) {
    const page: TaskConnection = await read({ first: Math.min(MAX_PAGE_SIZE, limit - nodes.length), after });
    if (first) totalCount = page.totalCount;
    nodes.push(...page.nodes.slice(0, limit - nodes.length));
    // A page that brought nothing or did not move the cursor would repeat forever: the walk ends there.
    if (!page.pageInfo.hasNextPage || page.pageInfo.endCursor === null || page.nodes.length === 0 || page.pageInfo.endCursor === after) break;
    after = page.pageInfo.endCursor;
  }
  return { nodes, totalCount };
}
