/**
 * Task lists bounded in bytes (packages/db tasks/page-body-budget.ts): a page
 * of `tasks` or `deadLetterTasks` ends before its payloads and results pass
 * PAGE_BODY_BYTES (4 MiB), with hasNextPage and a cursor that goes on from its
 * last task, so every task is still listed exactly once. The payloads here
 * compress to almost nothing in Postgres: the bound is on their JSON text,
 * what the gateway holds and sends.
 */
import { PAGE_BODY_BYTES } from "@tasklane/db";
import { describe, expect, it } from "vitest";
import { useGateway } from "../helpers/gateway-fixture.js";
import { createTenant, gql } from "../helpers/platform.js";

const TASKS = 30;
const BLOB = "x".repeat(200 * 1024);

interface Page {
  nodes: Array<{ id: string; payload: { blob: string; n: number } | null }>;
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
  totalCount: number;
}

describe("task lists bounded in bytes", () => {
  const platform = useGateway();

  it("ends tasks and deadLetterTasks pages before 4 MiB of payloads, and their cursors still list every task once", async () => {
    const { apiKey } = await createTenant(platform.gateway, "bodies", { maxPendingTasks: 1_000 });
    const api = async <T>(query: string, variables: Record<string, unknown> = {}) => {
      const res = await gql<T>(platform.gateway.url, query, variables, apiKey);
      if (res.errors) throw new Error(JSON.stringify(res.errors));
      return res.data as T;
    };
    const submitted: string[] = [];
    for (let i = 0; i < TASKS; i += 10) {
      const inputs = Array.from({ length: 10 }, (_, k) => ({ type: "big", maxAttempts: 1, payload: { blob: BLOB, n: i + k } }));
      const { submitTasks } = await api<{ submitTasks: Array<{ id: string }> }>(`mutation ($in: [SubmitTaskInput!]!) { submitTasks(inputs: $in) { id } }`, { in: inputs });
      submitted.push(...submitTasks.map((t) => t.id));
    }
    const small = (await api<{ submitTask: { id: string } }>(`mutation { submitTask(input: { type: "small", payload: { n: -1 } }) { id } }`)).submitTask.id;

    const readAll = async (field: "tasks" | "deadLetterTasks") => {
      const pages: Page[] = [];
      let after: string | null = null;
      for (let i = 0; i < 20; i++) {
        const data: Record<string, Page> = await api(
          `query ($after: String) { ${field}(first: 500, after: $after) { nodes { id payload } pageInfo { hasNextPage endCursor } totalCount } }`,
          { after },
        );
        const page = data[field]!;
        pages.push(page);
        if (!page.pageInfo.hasNextPage) break;
        after = page.pageInfo.endCursor;
      }
      return pages;
    };
    const perPage = Math.floor(PAGE_BODY_BYTES / BLOB.length);

    const listed = await readAll("tasks");
    expect(listed.length).toBeGreaterThanOrEqual(2);
    for (const page of listed) {
      expect(page.nodes.length).toBeGreaterThan(0);
      expect(page.nodes.length).toBeLessThanOrEqual(perPage + 1);
      expect(page.totalCount).toBe(TASKS + 1);
    }
    const ids = listed.flatMap((p) => p.nodes.map((n) => n.id));
    // Newest first, each task once, every payload whole.
    expect(ids).toEqual([small, ...submitted.slice().reverse()]);
    expect(listed.flatMap((p) => p.nodes).every((n) => n.payload?.blob === undefined || n.payload.blob === BLOB)).toBe(true);

    // Every big task dies; the dead-letter list is cut the same way.
    // A lease stops once its payloads pass 4 MiB (start-attempts.ts): lease until none is left.
    const leases: Array<{ leaseToken: string; task: { id: string; type: string } }> = [];
    for (let i = 0; i < 10; i++) {
      const { leaseTasks } = await api<{ leaseTasks: Array<{ leaseToken: string; task: { id: string; type: string } }> }>(
        `mutation { leaseTasks(queue: "default", workerId: "w", max: 100) { leaseToken task { id type } } }`,
      );
      if (leaseTasks.length === 0) break;
      leases.push(...leaseTasks.filter((l) => l.task.type === "big"));
    }
    expect(leases).toHaveLength(TASKS);
    for (const l of leases) {
      await api(`mutation ($id: ID!, $t: String!) { failTask(taskId: $id, leaseToken: $t, error: "boom", retryable: false) { status } }`, { id: l.task.id, t: l.leaseToken });
    }
    const dead = await readAll("deadLetterTasks");
    expect(dead.length).toBeGreaterThanOrEqual(2);
    for (const page of dead) expect(page.nodes.length).toBeLessThanOrEqual(perPage + 1);
    const deadIds = dead.flatMap((p) => p.nodes.map((n) => n.id));
    expect(new Set(deadIds).size).toBe(TASKS);
    expect([...deadIds].sort()).toEqual([...submitted].sort());
  });
});
